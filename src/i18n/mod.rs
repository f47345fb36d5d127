//! The tool's own words in the learner's language: Fluent catalogs (`en.ftl`, `ja.ftl` beside this file) compiled into the binary.
//!
//! Every line `lab-runner` prints to a person, around the lab's own texts, comes from here with
//! [`tr!`](crate::tr): `tr!(lang, "report-score", score = 3, total = 5)`. Verdict codes
//! (PASS/FAIL/…), JSON field names, commands and Kubernetes' own messages are not translated;
//! a message shows a command or a Kubernetes message quoted (backticks or quotes).
//!
//! Layers that must not decide the language (grading, the bundle loader, the engine's errors)
//! produce a [`Message`] with [`msg!`](crate::msg) instead: a catalog id and its arguments, which
//! whoever prints it renders in the session's language ([`Message::render`]).
//!
//! Fluent checks nothing at compile time, so the tests do: every id in both catalogs with the
//! same placeholders, and every `tr!` and `msg!` in the sources naming an id that exists with
//! exactly the arguments it passes.

pub mod outside;

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::LazyLock,
    time::Duration,
};

use fluent_bundle::{FluentArgs, FluentResource, FluentValue, concurrent::FluentBundle};

use crate::session::Lang;

/// The English catalog.
pub const EN_FTL: &str = include_str!("en.ftl");
/// The Japanese catalog.
pub const JA_FTL: &str = include_str!("ja.ftl");

/// A problem in a catalog (found by [`problems`]; the tests require none).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The catalog is not valid Fluent.
    #[error("{lang:?} catalog: syntax error: {reason}")]
    Syntax {
        /// Which catalog.
        lang: Lang,
        /// The parser's words.
        reason: String,
    },
    /// A message is in one catalog only.
    #[error("message {id} is in the {present:?} catalog but not in the {missing:?} one")]
    Missing {
        /// The message id.
        id: String,
        /// The catalog that has it.
        present: Lang,
        /// The catalog that lacks it.
        missing: Lang,
    },
    /// The two catalogs' versions of a message take different arguments.
    #[error("message {id} uses {en:?} in English but {ja:?} in Japanese")]
    Placeholders {
        /// The message id.
        id: String,
        /// Placeholders of the English message.
        en: BTreeSet<String>,
        /// Placeholders of the Japanese message.
        ja: BTreeSet<String>,
    },
}

/// A value for a message argument: text is shown as it is, a number also selects plural forms,
/// a message is rendered in the same language as the one that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// Shown as it is.
    Text(String),
    /// Formatted as a number; selects `[one]`/`[other]` variants.
    Number(i64),
    /// Another message, rendered in the same language.
    Message(Box<Message>),
    /// A text the lab author wrote in each language (a lab's description), shown in the one the
    /// message is rendered in.
    EachLanguage {
        /// The English text.
        en: String,
        /// The Japanese text.
        ja: String,
    },
    /// Texts (names, ids) joined as the language joins a list (`list-separator`: `a, b` /
    /// `a、b`), or `value-none` (`none` / `なし`) when there is none.
    Texts(Vec<String>),
    /// Messages rendered in the same language, joined with a separator that is itself a message
    /// (`list-separator-clause`, `; `, unless given with [`Arg::joined`]).
    List {
        /// The messages.
        items: Vec<Message>,
        /// What goes between two of them.
        separator: Box<Message>,
    },
}

impl Arg {
    /// `items` joined with `separator` (a message, so each language has its own).
    pub fn joined(items: Vec<Message>, separator: Message) -> Arg {
        Arg::List { items, separator: Box::new(separator) }
    }
}

/// A catalog message with its arguments, not yet in any language: what grading's evidence, the
/// loader's problems and the engine's errors are made of, so that the layer printing them (the
/// report, lint, the CLI) chooses the language. Build one with [`msg!`](crate::msg).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    id: &'static str,
    args: Vec<(&'static str, Arg)>,
}

impl Message {
    /// The message `id` with `args`. Use [`msg!`](crate::msg), which the catalog tests check.
    pub fn new(id: &'static str, args: Vec<(&'static str, Arg)>) -> Message {
        Message { id, args }
    }

    /// The catalog id.
    pub fn id(&self) -> &'static str {
        self.id
    }

    /// The message in `lang`.
    pub fn render(&self, lang: Lang) -> String {
        text(lang, self.id, &self.args)
    }
}

/// An error (or any value) whose words for a person are a catalog [`Message`]: its `Display` is
/// that message in English ([`english_display!`](crate::english_display)); whoever shows it to a
/// learner renders [`Localized::message`] in the session's language.
pub trait Localized {
    /// What it says, as a catalog message.
    fn message(&self) -> Message;
}

/// `english_display!(Type)`: `Display` for a [`Localized`] type, as its message in English (logs,
/// `to_string()`, library users).
#[macro_export]
macro_rules! english_display {
    ($($t:ty),+ $(,)?) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&$crate::i18n::Localized::message(self).render($crate::session::Lang::En))
            }
        }
    )+};
}

impl From<Message> for Arg {
    fn from(message: Message) -> Arg {
        Arg::Message(Box::new(message))
    }
}
impl From<&Message> for Arg {
    fn from(message: &Message) -> Arg {
        Arg::Message(Box::new(message.clone()))
    }
}
impl From<Vec<Message>> for Arg {
    fn from(messages: Vec<Message>) -> Arg {
        Arg::joined(messages, Message::new("list-separator-clause", Vec::new()))
    }
}

impl From<Vec<String>> for Arg {
    fn from(texts: Vec<String>) -> Arg {
        Arg::Texts(texts)
    }
}
impl From<&Vec<String>> for Arg {
    fn from(texts: &Vec<String>) -> Arg {
        Arg::Texts(texts.clone())
    }
}

/// `items` as a list argument ([`Arg::Texts`]): joined as the reader's language joins a list,
/// `none` when empty.
pub fn list<I, T>(items: I) -> Arg
where
    I: IntoIterator<Item = T>,
    T: ToString,
{
    Arg::Texts(items.into_iter().map(|item| item.to_string()).collect())
}

impl From<&str> for Arg {
    fn from(text: &str) -> Arg {
        Arg::Text(text.to_string())
    }
}
impl From<String> for Arg {
    fn from(text: String) -> Arg {
        Arg::Text(text)
    }
}
impl From<&String> for Arg {
    fn from(text: &String) -> Arg {
        Arg::Text(text.clone())
    }
}
macro_rules! number_arg {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(n: $t) -> Arg {
                Arg::Number(i64::try_from(n).unwrap_or(i64::MAX))
            }
        }
    )*};
}
number_arg!(i32, i64, u8, u32, u64, usize);

/// The message `id` in `lang`, with arguments. Use [`tr!`](crate::tr) rather than this.
///
/// A message missing from the catalog (which the tests rule out) shows as its id, so that a
/// mistake is visible rather than a blank.
pub fn text(lang: Lang, id: &str, args: &[(&str, Arg)]) -> String {
    let bundle = bundle(lang);
    let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) else {
        return id.to_string();
    };
    let mut fluent_args = FluentArgs::new();
    for (name, value) in args {
        match value {
            Arg::Text(text) => fluent_args.set(*name, FluentValue::from(text.as_str())),
            Arg::Number(n) => fluent_args.set(*name, FluentValue::from(*n)),
            Arg::Message(message) => fluent_args.set(*name, FluentValue::from(message.render(lang))),
            Arg::EachLanguage { en, ja } => fluent_args.set(
                *name,
                FluentValue::from(match lang {
                    Lang::En => en.as_str(),
                    Lang::Ja => ja.as_str(),
                }),
            ),
            Arg::Texts(texts) if texts.is_empty() => {
                fluent_args.set(*name, FluentValue::from(text(lang, "value-none", &[])))
            }
            Arg::Texts(texts) => {
                fluent_args.set(*name, FluentValue::from(texts.join(&text(lang, "list-separator", &[]))))
            }
            Arg::List { items, separator } => {
                let joined: Vec<String> = items.iter().map(|m| m.render(lang)).collect();
                fluent_args.set(*name, FluentValue::from(joined.join(&separator.render(lang))))
            }
        }
    }
    let mut errors = Vec::new();
    bundle.format_pattern(pattern, Some(&fluent_args), &mut errors).into_owned()
}

/// Whether the catalog has the message `id` (the tests require both languages to have the same
/// ids). For texts looked up by a name made at run time: the help pages' (`crate::cli::help`).
pub fn has_message(id: &str) -> bool {
    bundle(Lang::En).has_message(id)
}

/// A duration in the reader's words, at most two units, whole seconds: `45s`, `1m30s`, `2h5m`
/// (as `--confirm` and `--timeout` take them) in English, `45 秒`, `1 分 30 秒` in Japanese.
pub fn duration(duration: Duration) -> Message {
    let total = duration.as_secs();
    let (days, hours, minutes, seconds) = (total / 86_400, total / 3600 % 24, total / 60 % 60, total % 60);
    let text = |n: u64| n.to_string();
    match (days, hours, minutes, seconds) {
        (0, 0, 0, s) => crate::msg!("duration-s", s = text(s)),
        (0, 0, m, 0) => crate::msg!("duration-m", m = text(m)),
        (0, 0, m, s) => crate::msg!("duration-m-s", m = text(m), s = text(s)),
        (0, h, 0, _) => crate::msg!("duration-h", h = text(h)),
        (0, h, m, _) => crate::msg!("duration-h-m", h = text(h), m = text(m)),
        (d, 0, _, _) => crate::msg!("duration-d", d = text(d)),
        (d, h, _, _) => crate::msg!("duration-d-h", d = text(d), h = text(h)),
    }
}

/// `tr!(lang, "id", name = value, …)`: the catalog message `id` in `lang` with its arguments
/// (text or integers; integers select plural forms).
#[macro_export]
macro_rules! tr {
    ($lang:expr, $id:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::i18n::text($lang, $id, &[$((stringify!($name), $crate::i18n::Arg::from($value))),*])
    };
}

/// `msg!("id", name = value, …)`: the catalog message `id` with its arguments as a [`Message`]
/// value, rendered later in whichever language its reader has.
#[macro_export]
macro_rules! msg {
    ($id:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::i18n::Message::new($id, vec![$((stringify!($name), $crate::i18n::Arg::from($value))),*])
    };
}

static EN: LazyLock<FluentBundle<FluentResource>> = LazyLock::new(|| load(Lang::En));
static JA: LazyLock<FluentBundle<FluentResource>> = LazyLock::new(|| load(Lang::Ja));

fn bundle(lang: Lang) -> &'static FluentBundle<FluentResource> {
    match lang {
        Lang::En => &EN,
        Lang::Ja => &JA,
    }
}

fn source(lang: Lang) -> &'static str {
    match lang {
        Lang::En => EN_FTL,
        Lang::Ja => JA_FTL,
    }
}

fn load(lang: Lang) -> FluentBundle<FluentResource> {
    let tag = match lang {
        Lang::En => "en",
        Lang::Ja => "ja",
    };
    let locale: unic_langid::LanguageIdentifier = tag.parse().expect("en and ja are language ids");
    // A syntax error keeps the messages that parsed; `problems()` reports it and the tests fail.
    let resource = FluentResource::try_new(source(lang).to_string()).unwrap_or_else(|(partial, _)| partial);
    let mut bundle = FluentBundle::new_concurrent(vec![locale]);
    // Terminals and snapshots: no Unicode isolation marks around arguments.
    bundle.set_use_isolating(false);
    // Ids are unique within a catalog (a duplicate would be a syntax-level mistake the tests catch).
    let _ = bundle.add_resource(resource);
    bundle
}

/// Every message id of `lang`'s catalog with the placeholders (`$name`) its value uses,
/// selectors included.
pub fn messages(lang: Lang) -> BTreeMap<String, BTreeSet<String>> {
    use fluent_syntax::ast;
    fn walk(pattern: &ast::Pattern<&str>, into: &mut BTreeSet<String>) {
        for element in &pattern.elements {
            if let ast::PatternElement::Placeable { expression } = element {
                expression_names(expression, into);
            }
        }
    }
    fn expression_names(expression: &ast::Expression<&str>, into: &mut BTreeSet<String>) {
        match expression {
            ast::Expression::Select { selector, variants } => {
                inline_names(selector, into);
                for variant in variants {
                    walk(&variant.value, into);
                }
            }
            ast::Expression::Inline(inline) => inline_names(inline, into),
        }
    }
    fn inline_names(inline: &ast::InlineExpression<&str>, into: &mut BTreeSet<String>) {
        match inline {
            ast::InlineExpression::VariableReference { id } => {
                into.insert(id.name.to_string());
            }
            ast::InlineExpression::Placeable { expression } => expression_names(expression, into),
            _ => {}
        }
    }
    let resource = fluent_syntax::parser::parse(source(lang)).unwrap_or_else(|(partial, _)| partial);
    let mut out = BTreeMap::new();
    for entry in &resource.body {
        if let ast::Entry::Message(message) = entry {
            let mut names = BTreeSet::new();
            if let Some(value) = &message.value {
                walk(value, &mut names);
            }
            out.insert(message.id.name.to_string(), names);
        }
    }
    out
}

/// Placeholders the Japanese message shows and the English one leaves out, on purpose: an
/// operating-system error's kind, which its English text already says (`connection refused`).
pub const ONLY_IN_JAPANESE: &[(&str, &str)] = &[("os-error", "kind")];

/// Whether the English and Japanese `id` take the same placeholders, but for [`ONLY_IN_JAPANESE`].
fn same_placeholders(id: &str, en: &BTreeSet<String>, ja: &BTreeSet<String>) -> bool {
    let japanese_only = |name: &String| ONLY_IN_JAPANESE.contains(&(id, name.as_str()));
    en.iter().all(|name| ja.contains(name)) && ja.iter().all(|name| en.contains(name) || japanese_only(name))
}

/// What is wrong with the catalogs: syntax errors, ids in one language only, placeholders that
/// differ between the languages.
pub fn problems() -> Vec<Error> {
    let mut found = Vec::new();
    for lang in [Lang::En, Lang::Ja] {
        if let Err((_, errors)) = fluent_syntax::parser::parse(source(lang)) {
            for error in errors {
                found.push(Error::Syntax { lang, reason: format!("{error:?}") });
            }
        }
    }
    let (en, ja) = (messages(Lang::En), messages(Lang::Ja));
    for (id, en_names) in &en {
        match ja.get(id) {
            None => found.push(Error::Missing { id: id.clone(), present: Lang::En, missing: Lang::Ja }),
            Some(ja_names) if !same_placeholders(id, en_names, ja_names) => {
                found.push(Error::Placeholders { id: id.clone(), en: en_names.clone(), ja: ja_names.clone() })
            }
            Some(_) => {}
        }
    }
    for id in ja.keys().filter(|id| !en.contains_key(*id)) {
        found.push(Error::Missing { id: id.clone(), present: Lang::Ja, missing: Lang::En });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_catalogs_have_every_message_with_the_same_placeholders() {
        let problems = problems();
        assert!(problems.is_empty(), "{}", problems.iter().map(|p| format!("{p}\n")).collect::<String>());
        assert!(messages(Lang::En).len() > 20, "the catalog was read");
    }

    /// The top-level comma-separated arguments of each call of `opening` (`tr!(`, `msg!(`) in
    /// `source`.
    fn macro_calls(source: &str, opening: &str) -> Vec<Vec<String>> {
        let mut calls = Vec::new();
        let mut rest = source;
        while let Some(at) = rest.find(opening) {
            // `include_str!(` and the like end in `tr!(` too.
            let macro_name_goes_on =
                rest[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_');
            rest = &rest[at + opening.len()..];
            if macro_name_goes_on {
                continue;
            }
            let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
            let (mut args, mut current) = (Vec::new(), String::new());
            // The scan goes on right after the opening, so calls nested in arguments count too.
            for c in rest.chars() {
                if in_string {
                    current.push(c);
                    match (escaped, c) {
                        (true, _) => escaped = false,
                        (false, '\\') => escaped = true,
                        (false, '"') => in_string = false,
                        _ => {}
                    }
                    continue;
                }
                match c {
                    '"' => in_string = true,
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' if depth == 0 => {
                        args.push(current.trim().to_string());
                        break;
                    }
                    ')' | ']' | '}' => depth -= 1,
                    ',' if depth == 0 => {
                        args.push(std::mem::take(&mut current).trim().to_string());
                        continue;
                    }
                    _ => {}
                }
                current.push(c);
            }
            args.retain(|a| !a.is_empty());
            calls.push(args);
        }
        calls
    }

    /// Fluent does not check ids at compile time: every `tr!` and `msg!` in the sources must name
    /// a message that exists, and pass exactly the arguments the message uses; every message is
    /// used.
    #[test]
    fn every_tr_call_names_a_message_with_its_arguments() {
        // The Japanese placeholders: the English ones and those only Japanese shows (ONLY_IN_JAPANESE).
        let catalog = messages(Lang::Ja);
        let mut used = BTreeSet::new();
        let mut wrong = Vec::new();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") || path.ends_with("i18n/mod.rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                // `tr!(lang, "id", …)` and `msg!("id", …)`: where the id is among the arguments.
                let calls = macro_calls(&text, "tr!(").into_iter().map(|call| (1, call));
                for (at, call) in calls.chain(macro_calls(&text, "msg!(").into_iter().map(|call| (0, call))) {
                    let Some(id) = call.get(at).and_then(|id| id.strip_prefix('"')?.strip_suffix('"')) else {
                        wrong.push(format!("{}: a tr!/msg! without a literal id: {call:?}", path.display()));
                        continue;
                    };
                    used.insert(id.to_string());
                    let passed: BTreeSet<String> = call[at + 1..]
                        .iter()
                        .map(|arg| {
                            arg.split_once('=').map_or(arg.as_str(), |(name, _)| name).trim().to_string()
                        })
                        .collect();
                    match catalog.get(id) {
                        None => wrong.push(format!("{}: no message {id}", path.display())),
                        Some(wanted) if *wanted != passed => {
                            wrong.push(format!("{}: {id} takes {wanted:?}, given {passed:?}", path.display()))
                        }
                        Some(_) => {}
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        used.extend(USED_HERE.iter().map(|id| id.to_string()));
        // The help pages' texts are looked up by a name made from the command tree; the CLI's
        // tests hold each to a command or a flag that exists.
        let unused: Vec<&String> =
            catalog.keys().filter(|id| !used.contains(*id) && !crate::cli::help::is_tree_text(id)).collect();
        assert!(unused.is_empty(), "catalog messages no code uses: {unused:?}");
    }

    /// Messages this module itself formats (outside `tr!`).
    const USED_HERE: &[&str] = &[
        "list-separator-clause",
        "list-separator",
        "value-none",
        "duration-s",
        "duration-m",
        "duration-m-s",
        "duration-h",
        "duration-h-m",
        "duration-d",
        "duration-d-h",
    ];

    /// Whether `text` carries Japanese (kana or kanji).
    fn has_japanese(text: &str) -> bool {
        text.chars().any(|c| matches!(c, '\u{3040}'..='\u{30ff}' | '\u{4e00}'..='\u{9fff}'))
    }

    /// Every message of both catalogs formatted with every argument it takes, as a count (both
    /// plural branches) and as text: Fluent reports no error, every argument shows, nothing is
    /// left blank, and the Japanese text is Japanese unless it is a command or a symbol.
    #[test]
    fn every_message_formats_in_both_languages() {
        let mut wrong = Vec::new();
        // The Japanese placeholders, so that one only Japanese shows (ONLY_IN_JAPANESE) is set.
        for (id, names) in messages(Lang::Ja) {
            for lang in [Lang::En, Lang::Ja] {
                let bundle = bundle(lang);
                let pattern =
                    bundle.get_message(&id).and_then(|m| m.value()).expect("the message has a value");
                for count in [1, 7] {
                    let mut args = FluentArgs::new();
                    for name in &names {
                        // Numbers select plurals; a text argument must show as given.
                        if NUMBERS.contains(&name.as_str()) {
                            args.set(name.as_str(), FluentValue::from(count));
                        } else {
                            args.set(name.as_str(), FluentValue::from(format!("«{name}»")));
                        }
                    }
                    let mut errors = Vec::new();
                    let text = bundle.format_pattern(pattern, Some(&args), &mut errors);
                    if !errors.is_empty() {
                        wrong.push(format!("{lang:?} {id}: {errors:?}"));
                    }
                    if text.trim().is_empty() {
                        wrong.push(format!("{lang:?} {id}: blank"));
                    }
                    for name in &names {
                        let shown = format!("«{name}»");
                        let left_out =
                            lang == Lang::En && ONLY_IN_JAPANESE.contains(&(id.as_str(), name.as_str()));
                        if !NUMBERS.contains(&name.as_str()) && !left_out && !text.contains(&shown) {
                            wrong.push(format!("{lang:?} {id}: does not show ${name}: {text}"));
                        }
                    }
                    // What is left without the arguments: no letters means symbols only.
                    let mut own = text.to_string();
                    for name in &names {
                        own = own.replace(&format!("«{name}»"), "");
                    }
                    let symbols_only = !own.chars().any(char::is_alphabetic);
                    if lang == Lang::Ja
                        && !has_japanese(&own)
                        && !symbols_only
                        && !JA_AS_IN_EN.contains(&id.as_str())
                    {
                        wrong.push(format!("Ja {id} is not Japanese: {text}"));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// Messages whose Japanese is the English: a command, an identifier or a symbol only.
    const JA_AS_IN_EN: &[&str] = &[
        "sim-status-pid",
        "sim-status-kubeconfig",
        "labs-answers",
        "loader-yaml-field-at",
        "board-page-english",
    ];

    /// The arguments that are counts (they select plural forms).
    const NUMBERS: &[&str] =
        &["count", "open", "problems", "failing", "labs", "score", "total", "tier", "seconds", "passed"];

    #[test]
    fn durations_read_as_typed() {
        let text = |s, lang| duration(Duration::from_secs(s)).render(lang);
        let en: Vec<String> =
            [0, 45, 120, 90, 3600, 3725, 90_000].iter().map(|s| text(*s, Lang::En)).collect();
        assert_eq!(en, ["0s", "45s", "2m", "1m30s", "1h", "1h2m", "1d1h"]);
        assert_eq!(text(90, Lang::Ja), "1 分 30 秒");
        assert_eq!(text(6, Lang::Ja), "6 秒");
    }

    #[test]
    fn plurals_and_arguments_are_filled_in() {
        assert_eq!(tr!(Lang::En, "watch-evaluations", count = 1), "1 evaluation");
        assert_eq!(tr!(Lang::En, "watch-evaluations", count = 3), "3 evaluations");
        assert_eq!(tr!(Lang::Ja, "watch-evaluations", count = 3), "評価 3 回");
        assert_eq!(text(Lang::En, "no-such-message", &[]), "no-such-message");
    }
}
