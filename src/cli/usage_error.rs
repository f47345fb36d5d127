//! clap's usage errors in the learner's language: each rendered from its kind and context through the catalog, laid out as clap lays it out.
//!
//! clap knows what went wrong (an [`ErrorKind`] and its context: the argument, the value, the
//! values it would take, the similar names); the sentences around them come from
//! `src/i18n/*.ftl`, so `lab-runner --lang ja check x --bogus` says in Japanese what clap says in
//! English, and still exits 2. The reason a value parser gives is shown in the learner's
//! language when it is one of ours ([`super::ValueError`]), and quoted otherwise.

use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::{
    i18n::{Localized, Message},
    msg,
    session::Lang,
    tr,
};

/// The usage error `error` as `lab-runner` prints it on stderr, in `lang`: the error, clap's
/// tips, the usage line and where to read more.
pub fn render(error: &clap::Error, lang: Lang) -> String {
    let mut out = tr!(lang, "error-line", message = headline(error, lang));
    let tips = tips(error, lang);
    if !tips.is_empty() {
        out.push('\n');
        for tip in tips {
            out.push_str(&format!("\n  {}", tr!(lang, "usage-tip", text = tip)));
        }
    }
    if let Some(ContextValue::StyledStr(usage)) = error.get(ContextKind::Usage) {
        out.push_str("\n\n");
        out.push_str(&usage_lines(&usage.to_string(), lang));
    }
    out.push_str("\n\n");
    out.push_str(&tr!(lang, "usage-try-help"));
    out.push('\n');
    out
}

/// clap's `Usage: …` (one line, or several aligned under the first) under the heading of `lang`.
fn usage_lines(usage: &str, lang: Lang) -> String {
    let heading = tr!(lang, "help-heading-usage");
    let indent = " ".repeat(unicode_width::UnicodeWidthStr::width(heading.as_str()) + 1);
    let mut lines = usage.lines().map(str::trim);
    let first = lines.next().unwrap_or_default();
    let first = first.strip_prefix("Usage:").unwrap_or(first).trim_start();
    let mut out = format!("{heading} {first}");
    for line in lines {
        out.push_str(&format!("\n{indent}{line}"));
    }
    out
}

/// A text context value.
fn string(error: &clap::Error, kind: ContextKind) -> Option<String> {
    match error.get(kind)? {
        ContextValue::String(text) => Some(text.clone()),
        _ => None,
    }
}

/// A list context value (a single text counts as a list of one).
fn strings(error: &clap::Error, kind: ContextKind) -> Vec<String> {
    match error.get(kind) {
        Some(ContextValue::Strings(texts)) => texts.clone(),
        Some(ContextValue::String(text)) => vec![text.clone()],
        _ => Vec::new(),
    }
}

/// A number context value.
fn number(error: &clap::Error, kind: ContextKind) -> Option<i64> {
    match error.get(kind)? {
        ContextValue::Number(n) => i64::try_from(*n).ok(),
        _ => None,
    }
}

/// `names` as one text, joined as `lang` joins a list (`'a', 'b'` when `quoted`, as clap quotes
/// similar names but not possible values).
fn listed(names: &[String], quoted: bool, lang: Lang) -> String {
    let names: Vec<String> =
        names.iter().map(|n| if quoted { format!("'{n}'") } else { n.clone() }).collect();
    names.join(&tr!(lang, "list-separator"))
}

/// The first line of the error (and the lines clap puts under it), in `lang`.
fn headline(error: &clap::Error, lang: Lang) -> String {
    let arg = string(error, ContextKind::InvalidArg);
    let value = string(error, ContextKind::InvalidValue);
    let message = match (error.kind(), arg, value) {
        (ErrorKind::UnknownArgument, Some(arg), _) => msg!("usage-unknown-argument", arg = arg),
        (ErrorKind::InvalidSubcommand, ..) => match string(error, ContextKind::InvalidSubcommand) {
            Some(name) => msg!("usage-unknown-subcommand", name = name),
            None => return other(error, lang),
        },
        (ErrorKind::InvalidValue, Some(arg), Some(value)) if value.is_empty() => {
            msg!("usage-value-required", arg = arg)
        }
        (ErrorKind::InvalidValue, Some(arg), Some(value)) => {
            let possible = strings(error, ContextKind::ValidValue);
            let line = msg!("usage-invalid-value", arg = arg, value = value).render(lang);
            return match possible.is_empty() {
                true => line,
                false => format!(
                    "{line}\n  {}",
                    tr!(lang, "usage-possible-values", values = listed(&possible, false, lang))
                ),
            };
        }
        (ErrorKind::ValueValidation, Some(arg), Some(value)) => {
            msg!("usage-invalid-value-because", arg = arg, value = value, reason = value_problem(error))
        }
        (ErrorKind::MissingRequiredArgument, ..) => {
            let missing = strings(error, ContextKind::InvalidArg);
            let lines: String = missing.iter().map(|arg| format!("\n  {arg}")).collect();
            return tr!(lang, "usage-missing-arguments") + &lines;
        }
        (ErrorKind::MissingSubcommand, ..) => match string(error, ContextKind::InvalidSubcommand) {
            Some(name) => {
                let possible = strings(error, ContextKind::ValidSubcommand);
                let line = tr!(lang, "usage-missing-subcommand", name = name);
                return match possible.is_empty() {
                    true => line,
                    false => format!(
                        "{line}\n  {}",
                        tr!(lang, "usage-possible-subcommands", values = listed(&possible, false, lang))
                    ),
                };
            }
            None => return other(error, lang),
        },
        (ErrorKind::TooManyValues, Some(arg), Some(value)) => {
            msg!("usage-too-many-values", arg = arg, value = value)
        }
        (ErrorKind::TooFewValues, Some(arg), _) => {
            match (number(error, ContextKind::MinValues), number(error, ContextKind::ActualNumValues)) {
                (Some(min), Some(given)) => {
                    msg!("usage-too-few-values", arg = arg, count = min, given = given)
                }
                _ => return other(error, lang),
            }
        }
        (ErrorKind::WrongNumberOfValues, Some(arg), _) => {
            match (number(error, ContextKind::ExpectedNumValues), number(error, ContextKind::ActualNumValues))
            {
                (Some(wanted), Some(given)) => {
                    msg!("usage-wrong-number-of-values", arg = arg, count = wanted, given = given)
                }
                _ => return other(error, lang),
            }
        }
        (ErrorKind::ArgumentConflict, ..) => return conflict(error, lang),
        (ErrorKind::NoEquals, Some(arg), _) => msg!("usage-no-equals", arg = arg),
        (ErrorKind::InvalidUtf8, ..) => msg!("usage-invalid-utf8"),
        _ => return other(error, lang),
    };
    message.render(lang)
}

/// `ArgumentConflict`: an argument given twice, or with one (or several) it excludes.
fn conflict(error: &clap::Error, lang: Lang) -> String {
    let subject =
        match (string(error, ContextKind::InvalidArg), string(error, ContextKind::InvalidSubcommand)) {
            (Some(arg), _) => msg!("usage-subject-argument", name = arg),
            (None, Some(name)) => msg!("usage-subject-subcommand", name = name),
            (None, None) => return other(error, lang),
        };
    let prior = error.get(ContextKind::PriorArg);
    if let (Some(ContextValue::String(prior)), Some(arg)) = (prior, string(error, ContextKind::InvalidArg))
        && *prior == arg
    {
        return tr!(lang, "usage-argument-repeated", subject = subject);
    }
    match prior {
        Some(ContextValue::String(other)) => tr!(lang, "usage-conflict", subject = subject, other = other),
        Some(ContextValue::Strings(others)) => {
            let lines: String = others.iter().map(|other| format!("\n  {other}")).collect();
            tr!(lang, "usage-conflict-list", subject = subject) + &lines
        }
        _ => tr!(lang, "usage-conflict-unnamed", subject = subject),
    }
}

/// An error clap gives no context for: its own words, quoted in a language other than English.
fn other(error: &clap::Error, lang: Lang) -> String {
    let text = error.kind().as_str().map(str::to_string).unwrap_or_else(|| {
        let rendered = error.render().to_string();
        let first = rendered.lines().next().unwrap_or_default();
        first.strip_prefix("error: ").unwrap_or(first).to_string()
    });
    tr!(lang, "usage-other", text = text)
}

/// Why a value parser refused a value: ours in the learner's language, another one's quoted.
fn value_problem(error: &clap::Error) -> Message {
    let source = std::error::Error::source(error);
    match source.and_then(|source| source.downcast_ref::<super::ValueError>()) {
        Some(ours) => ours.message(),
        None => msg!("usage-reason-other", text = source.map(|s| s.to_string()).unwrap_or_default()),
    }
}

/// clap's tips (similar names, how to pass a value that looks like a flag), in `lang`.
fn tips(error: &clap::Error, lang: Lang) -> Vec<String> {
    let mut tips = Vec::new();
    for (kind, id) in [
        (ContextKind::SuggestedSubcommand, "subcommand"),
        (ContextKind::SuggestedArg, "argument"),
        (ContextKind::SuggestedValue, "value"),
    ] {
        let similar = strings(error, kind);
        if similar.is_empty() {
            continue;
        }
        let names = listed(&similar, true, lang);
        let count = similar.len();
        tips.push(match id {
            "subcommand" => tr!(lang, "usage-similar-subcommand", count = count, names = names),
            "argument" => tr!(lang, "usage-similar-argument", count = count, names = names),
            _ => tr!(lang, "usage-similar-value", count = count, names = names),
        });
    }
    if let Some(ContextValue::StyledStrs(suggestions)) = error.get(ContextKind::Suggested) {
        tips.extend(suggestions.iter().map(|tip| suggestion(&tip.to_string()).render(lang)));
    }
    tips
}

/// One of clap's written tips, recognised by its wording (`tips_are_recognised` holds clap to
/// it): to pass a value that looks like a flag, a flag that exists on a subcommand, a stray `--`.
fn suggestion(text: &str) -> Message {
    fn between<'a>(text: &'a str, before: &str, after: &str) -> Option<&'a str> {
        text.strip_prefix(before)?.strip_suffix(after)
    }
    if let Some((value, usage)) =
        between(text, "to pass '", "'").and_then(|rest| rest.split_once("' as a value, use '"))
    {
        return msg!("usage-tip-pass-as-value", value = value, usage = usage);
    }
    if let Some(subcommand) = between(text, "subcommand '", "' exists; to use it, remove the '--' before it")
    {
        return msg!("usage-tip-remove-dashes", subcommand = subcommand);
    }
    if let Some(usage) = between(text, "'", "' exists") {
        return msg!("usage-tip-exists", usage = usage);
    }
    msg!("usage-reason-other", text = text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(args: &[&str], lang: Lang) -> String {
        let command = crate::cli::command(lang);
        let error = command.try_get_matches_from(std::iter::once("lab-runner").chain(args.iter().copied()));
        render(&error.expect_err("a usage error"), lang)
    }

    /// In English, the rendering is clap's own, word for word.
    #[test]
    fn english_is_claps_text() {
        for args in [
            &["check", "x", "--bogus-flag"][..],
            &["check", "x", "--hint", "abc"],
            &["bogus"],
            &["check"],
            &["check", "x", "--format", "xml"],
            &["check", "x", "--watch", "--confirm", "2s"],
            &["chek", "x"],
            &["check", "x", "--detail"],
            &["reset", "x", "--remove", "--to-stage", "a"],
            &["check", "x", "--reveal", "--reveal"],
        ] {
            let ours = error(args, Lang::En);
            let theirs = <crate::cli::Cli as clap::CommandFactory>::command()
                .try_get_matches_from(std::iter::once("lab-runner").chain(args.iter().copied()))
                .expect_err("a usage error")
                .render()
                .to_string();
            assert_eq!(ours, theirs, "{args:?}");
        }
    }

    #[test]
    fn japanese_names_the_problem_and_keeps_flags_and_values() {
        let text = error(&["check", "x", "--bogus-flag"], Lang::Ja);
        assert!(text.starts_with("エラー: "), "{text}");
        assert!(text.contains("'--bogus-flag'") && text.contains("使い方: lab-runner check"), "{text}");
        let text = error(&["check", "x", "--format", "xml"], Lang::Ja);
        assert!(text.contains("'xml'") && text.contains("human、json、junit"), "{text}");
        let text = error(&["check", "x", "--hint", "abc"], Lang::Ja);
        assert!(text.contains("'abc'") && text.contains("0 から 255"), "{text}");
    }

    #[test]
    fn tips_are_recognised() {
        let text = error(&["check", "x", "--bogus-flag"], Lang::Ja);
        assert!(!text.contains("to pass"), "{text}");
        let text = error(&["check", "x", "--detail"], Lang::Ja);
        assert!(text.contains("'--details'") && !text.contains("similar"), "{text}");
        assert_eq!(
            suggestion("to pass '-x' as a value, use '-- -x'"),
            msg!("usage-tip-pass-as-value", value = "-x", usage = "-- -x")
        );
        assert_eq!(
            suggestion("subcommand 'check' exists; to use it, remove the '--' before it"),
            msg!("usage-tip-remove-dashes", subcommand = "check")
        );
        assert_eq!(suggestion("'sim up --port' exists"), msg!("usage-tip-exists", usage = "sim up --port"));
    }
}
