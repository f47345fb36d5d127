//! The help pages in the learner's language: every text of clap's command tree set from the catalog after the tree is built.
//!
//! clap's derive gives the tree its shape (commands, flags, value names); the words come from
//! `src/i18n/*.ftl`, looked up by where they are in the tree: a command's `about` is
//! `help-<path>` (`help` for `lab-runner` itself, `help-check`, `help-sim-up`), its `long_about`
//! `help-<path>-long` when the catalog has one, an argument's help `help-<path>--<flag>` (the long
//! flag, else the positional's name), looked up from the command up to `lab-runner` so that a
//! flag many commands share (`--state-dir` of every `sim` command) is written once. clap's own
//! words (`Usage:`, the section headings, `[default: …]`, the `--help` flag and the `help`
//! command) are replaced by catalog messages too, and every page ends with the exit codes its
//! command can return ([`crate::exit::of_command`]).

use clap::{Arg, Command, builder::StyledStr};

use crate::{exit, i18n, session::Lang, tr};

/// `command` with every text in `lang`: the derive's tree, localized, then built (so that clap
/// adds its `--help` and `help`, which are localized after).
pub fn localize(mut command: Command, lang: Lang) -> Command {
    user_texts(&mut command, &[], lang);
    command.build();
    builtin_texts(&mut command, lang);
    command
}

/// The catalog id of the command at `path`: `help`, `help-check`, `help-sim-up`.
pub fn command_id(path: &[&str]) -> String {
    path.iter().fold(String::from("help"), |id, name| format!("{id}-{name}"))
}

/// How an argument is named in catalog ids: its long flag, else its id (a positional), with `-`.
pub fn arg_key(arg: &Arg) -> String {
    arg.get_long().map(str::to_string).unwrap_or_else(|| arg.get_id().as_str().replace('_', "-"))
}

/// The catalog id holding `arg`'s help for the command at `path`: the first of
/// `help-<path>--<key>`, `help-<parent>--<key>`, … `help--<key>` that the catalog has.
pub fn arg_help_id(path: &[&str], arg: &Arg, suffix: &str) -> Option<String> {
    let key = arg_key(arg);
    (0..=path.len())
        .rev()
        .map(|depth| format!("{}--{key}{suffix}", command_id(&path[..depth])))
        .find(|id| i18n::has_message(id))
}

/// The texts of the commands and arguments the derive defined, for the command at `path` and
/// below (before the build, so that global flags carry theirs into every subcommand).
fn user_texts(command: &mut Command, path: &[&str], lang: Lang) {
    let id = command_id(path);
    let long_id = format!("{id}-long");
    let long_about = i18n::has_message(&long_id).then(|| i18n::text(lang, &long_id, &[]));
    let (template, exit_codes) = (template(command, lang), exit_codes(command, path, lang));
    let mut owned = std::mem::take(command).about(i18n::text(lang, &id, &[]));
    if let Some(long_about) = long_about {
        owned = owned.long_about(long_about);
    }
    *command = owned
        .help_template(template)
        .subcommand_help_heading(tr!(lang, "help-heading-commands"))
        .after_help(exit_codes)
        .mut_args(|arg| arg_texts(arg, path, lang));
    for sub in command.get_subcommands_mut() {
        let name = sub.get_name().to_string();
        let mut sub_path = path.to_vec();
        sub_path.push(&name);
        user_texts(sub, &sub_path, lang);
    }
}

/// One argument's help and long help from the catalog, its heading, and clap's bracketed notes
/// (`[default: …]`, `[env: …]`, `[possible values: …]`, `[aliases: …]`) in `lang`.
fn arg_texts(arg: Arg, path: &[&str], lang: Lang) -> Arg {
    let path: &[&str] = if arg.is_global_set() { &[] } else { path };
    let help = match arg_help_id(path, &arg, "") {
        Some(id) => i18n::text(lang, &id, &[]),
        // The test `every_command_and_argument_has_its_help` rules this out.
        None => format!("help-{}--{}", path.join("-"), arg_key(&arg)),
    };
    let notes = notes(&arg, lang);
    let with_notes = |text: String| match notes.is_empty() {
        true => text,
        false => tr!(lang, "help-with-notes", help = text, notes = notes.concat()),
    };
    let long = arg_help_id(path, &arg, "-long").map(|id| with_notes(i18n::text(lang, &id, &[])));
    let heading = match arg.is_positional() {
        true => tr!(lang, "help-heading-arguments"),
        false => tr!(lang, "help-heading-options"),
    };
    let arg = match long {
        Some(long) => arg.long_help(long),
        None => arg,
    };
    let arg = arg.help(with_notes(help)).help_heading(heading).hide_env(true);
    match arg.get_action().takes_values() {
        true => arg.hide_default_value(true).hide_possible_values(true),
        false => arg,
    }
}

/// What clap would put in brackets after an argument's help, in `lang`.
fn notes(arg: &Arg, lang: Lang) -> Vec<String> {
    let separator = tr!(lang, "list-separator");
    let mut notes = Vec::new();
    let takes_values = arg.get_action().takes_values();
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect();
    if takes_values && !values.is_empty() {
        notes.push(tr!(lang, "help-note-values", values = values.join(&separator)));
    }
    let defaults: Vec<String> =
        arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
    if takes_values && !defaults.is_empty() {
        notes.push(tr!(lang, "help-note-default", value = defaults.join(&separator)));
    }
    if let Some(variable) = arg.get_env() {
        notes.push(tr!(lang, "help-note-env", name = variable.to_string_lossy().into_owned()));
    }
    if let Some(aliases) = arg.get_all_aliases() {
        let aliases: Vec<String> = aliases.iter().map(|alias| format!("--{alias}")).collect();
        notes.push(tr!(lang, "help-note-aliases", aliases = aliases.join(&separator)));
    }
    notes
}

/// clap's help template with its `Usage:` heading in `lang` (styled as clap styles it).
fn template(command: &Command, lang: Lang) -> StyledStr {
    let heading = styled_heading(command, &tr!(lang, "help-heading-usage"));
    StyledStr::from(format!(
        "{{before-help}}{{about-with-newline}}\n{heading} {{usage}}\n\n{{all-args}}{{after-help}}"
    ))
}

/// `text` in clap's heading style (bold and underlined on a terminal, plain elsewhere).
fn styled_heading(command: &Command, text: &str) -> String {
    let style = command.get_styles().get_header();
    format!("{style}{text}{style:#}")
}

/// The exit codes of the command at `path`, one line each, as its page ends.
fn exit_codes(command: &Command, path: &[&str], lang: Lang) -> StyledStr {
    let mut out = styled_heading(command, &tr!(lang, "help-heading-exit-codes"));
    for code in exit::of_command(&path.join(" ")) {
        out.push_str(&format!("\n  {code}  {}", exit::meaning(*code).render(lang)));
    }
    StyledStr::from(out)
}

/// clap's own `--help`, `--version` and `help` command, in `lang`, everywhere in the built tree.
fn builtin_texts(command: &mut Command, lang: Lang) {
    let has = |id: &str| command.get_arguments().any(|arg| arg.get_id() == id);
    let (has_help, has_version) = (has("help"), has("version"));
    let mut owned = std::mem::take(command);
    let heading = tr!(lang, "help-heading-options");
    if has_help {
        owned = owned.mut_arg("help", |arg| {
            let long = arg.get_long_help().is_some();
            let arg = arg.help_heading(heading.clone());
            match long {
                true => arg
                    .help(tr!(lang, "help-builtin-help-summary"))
                    .long_help(tr!(lang, "help-builtin-help-long")),
                false => arg.help(tr!(lang, "help-builtin-help")),
            }
        });
    }
    if has_version {
        owned = owned.mut_arg("version", |arg| {
            arg.help(tr!(lang, "help-builtin-version")).help_heading(heading.clone())
        });
    }
    *command = owned;
    for sub in command.get_subcommands_mut() {
        if sub.get_name() == "help" {
            help_command_texts(sub, lang);
        } else {
            builtin_texts(sub, lang);
        }
    }
}

/// clap's `help` command (and its copies of the tree, whose abouts are already localized).
fn help_command_texts(command: &mut Command, lang: Lang) {
    let mut owned = std::mem::take(command).about(tr!(lang, "help-builtin-help-command"));
    let template = template(&owned, lang);
    owned = owned.help_template(template).subcommand_help_heading(tr!(lang, "help-heading-commands"));
    if owned.get_arguments().any(|arg| arg.get_id() == "subcommand") {
        let heading = tr!(lang, "help-heading-arguments");
        owned = owned.mut_arg("subcommand", |arg| {
            arg.help(tr!(lang, "help-builtin-help-command-arg")).help_heading(heading)
        });
    }
    *command = owned;
    for sub in command.get_subcommands_mut() {
        if sub.get_name() == "help" {
            help_command_texts(sub, lang);
        }
    }
}

/// Whether the catalog message `id` is a text of the command tree (an about, a flag's help),
/// looked up by a name made at run time rather than by `tr!`.
pub fn is_tree_text(id: &str) -> bool {
    id == "help" || id.starts_with("help-")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use clap::CommandFactory;

    use super::*;
    use crate::cli::Cli;

    /// Every command of the derive's tree with its path (`[]`, `["check"]`, `["sim", "up"]`).
    fn commands(command: &Command, path: Vec<String>, into: &mut Vec<(Vec<String>, Command)>) {
        into.push((path.clone(), command.clone()));
        for sub in command.get_subcommands() {
            let mut sub_path = path.clone();
            sub_path.push(sub.get_name().to_string());
            commands(sub, sub_path, into);
        }
    }

    fn tree() -> Vec<(Vec<String>, Command)> {
        let mut all = Vec::new();
        commands(&Cli::command(), Vec::new(), &mut all);
        all
    }

    /// The catalog has an about for every command and a help for every flag and argument, and
    /// no text of the tree that nothing looks up (a renamed flag leaves none behind).
    #[test]
    fn every_command_and_argument_has_its_help() {
        let mut used = BTreeSet::new();
        let mut missing = Vec::new();
        for (path, command) in tree() {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            let id = command_id(&path);
            if i18n::has_message(&id) {
                used.insert(id.clone());
            } else {
                missing.push(id.clone());
            }
            used.insert(format!("{id}-long"));
            for arg in command.get_arguments() {
                let at: &[&str] = if arg.is_global_set() { &[] } else { &path };
                match arg_help_id(at, arg, "") {
                    Some(found) => {
                        used.insert(found);
                    }
                    None => missing.push(format!("{id}--{}", arg_key(arg))),
                }
                used.extend(arg_help_id(at, arg, "-long"));
            }
        }
        assert!(missing.is_empty(), "no help in the catalog for {missing:?}");
        let fixed = ["help-heading-", "help-note-", "help-builtin-", "help-with-notes"];
        let stale: Vec<String> = i18n::messages(Lang::En)
            .into_keys()
            .filter(|id| is_tree_text(id) && !fixed.iter().any(|f| id.starts_with(f)) && !used.contains(id))
            .collect();
        assert!(stale.is_empty(), "help texts no command or flag looks up: {stale:?}");
    }

    /// `exit::BY_COMMAND` has a row for every command and none for a command that is gone.
    #[test]
    fn every_command_lists_its_exit_codes() {
        let paths: BTreeSet<String> = tree().into_iter().map(|(path, _)| path.join(" ")).collect();
        let listed: BTreeSet<String> = exit::BY_COMMAND.iter().map(|(path, _)| path.to_string()).collect();
        assert_eq!(paths, listed);
    }

    /// Every page, short and long, in Japanese carries none of clap's English words.
    #[test]
    fn no_page_keeps_claps_english() {
        let mut built = crate::cli::command(Lang::Ja);
        let mut pages = Vec::new();
        for (path, _) in tree() {
            let mut command = &mut built;
            for name in &path {
                command = command.find_subcommand_mut(name).expect("the built tree has the path");
            }
            pages.push((path.join(" "), command.render_help().to_string(), true));
            pages.push((path.join(" "), command.render_long_help().to_string(), true));
        }
        let mut help = built.find_subcommand_mut("help").expect("clap's help command").clone();
        pages.push(("help".into(), help.render_help().to_string(), false));
        for (path, page, exit_codes) in pages {
            for english in [
                "Usage:",
                "Options:",
                "Arguments:",
                "Commands:",
                "Print ",
                "[default:",
                "[possible",
                "[env:",
                "[aliases:",
                "Exit codes",
                "Possible values",
            ] {
                assert!(!page.contains(english), "`lab-runner {path} --help` says {english:?}:\n{page}");
            }
            assert!(page.contains("使い方: "), "{path}:\n{page}");
            assert_eq!(page.contains("終了コード:"), exit_codes, "{path}:\n{page}");
        }
    }

    /// A subcommand's page lists the codes that command can end with, no more.
    #[test]
    fn a_page_lists_its_commands_exit_codes() {
        let mut built = crate::cli::command(Lang::En);
        let lint = built.find_subcommand_mut("lint").unwrap().render_help().to_string();
        let codes = "Exit codes:\n  0  all passed / done\n  2  bad input (CLI usage, lab bundle, an invalid answer, a refused start)\n";
        assert!(lint.ends_with(codes), "{lint}");
        let check = built.find_subcommand_mut("check").unwrap().render_help().to_string();
        assert!(
            check.contains("\n  1  checks failed") && check.contains("\n  4  timed out waiting"),
            "{check}"
        );
    }
}
