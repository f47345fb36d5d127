//! The documentation's marked blocks: each ```` ```yaml ```` (or plain ```` ``` ````) block that follows a `<!-- directive: argument -->` line, and the fenced blocks after it.

/// One marked block of a Markdown file: its directive (`parse`, `same-as`, `guide`), the
/// directive's argument, and the block's text with a final newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    /// `parse`, `same-as`, `guide`.
    pub directive: String,
    /// `lab`, a file path, …
    pub argument: String,
    /// The block, every line ending in `\n`.
    pub block: String,
}

/// Every `<!-- directive: argument -->` of `doc` with the ```` ```yaml ```` block right after it.
pub fn marked_blocks(doc: &str) -> Vec<Marked> {
    let mut lines = doc.lines();
    let mut marked = Vec::new();
    while let Some(line) = lines.next() {
        let Some(directive) = line.strip_prefix("<!-- ").and_then(|l| l.strip_suffix(" -->")) else {
            continue;
        };
        assert_eq!(lines.next(), Some("```yaml"), "a yaml block follows <!-- {directive} -->");
        let block: String = lines.by_ref().take_while(|l| *l != "```").map(|l| format!("{l}\n")).collect();
        let (directive, argument) = directive.split_once(": ").unwrap_or((directive, ""));
        marked.push(Marked { directive: directive.to_string(), argument: argument.to_string(), block });
    }
    marked
}

/// The ```` ```text ```` blocks that start with `$ COMMAND`: the command's expected output, in
/// document order, each without its `$` line (`text`, not `console`: the test that builds the
/// guide's lab runs them, in the lab's directory, not trycmd).
pub fn transcripts<'d>(doc: &'d str, command: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        if line != "```text" {
            continue;
        }
        let block: Vec<&'d str> = lines.by_ref().take_while(|l| *l != "```").collect();
        if block.first().is_some_and(|first| first.strip_prefix("$ ") == Some(command)) {
            found.push(block[1..].iter().map(|l| format!("{l}\n")).collect());
        }
    }
    found
}
