//! The Japanese texts keep to `docs/glossary.md`: no form the glossary rules out, full-width punctuation and です/ます in the sentences a learner reads, and Japanese only in the catalog.
//!
//! The texts are the Japanese catalog (`src/i18n/ja.ftl`), every `ja:` text of the labs (built-in
//! and fixtures), the learners' Japanese guides (`docs/labs/*.ja.md`), and every other line with
//! Japanese in the repository: Rust sources (their tests and comments quote printed lines), the
//! board's page, the snapshots of printed output, the other docs. A form ruled out is found where
//! it is not the start of the glossary's own form, so クラスタ is caught and クラスター is not.
//! Outside the tests, Rust code holds no Japanese at all: what a learner reads comes from the
//! catalog, so one file decides every word.

use std::path::Path;

use regex::Regex;

use crate::support::tree::files;

/// One row of the glossary's table: the Japanese form and the forms not used.
struct Term {
    japanese: Vec<String>,
    not_used: Vec<String>,
}

/// The rows of `docs/glossary.md`'s terms table.
fn glossary() -> Vec<Term> {
    let text = std::fs::read_to_string("docs/glossary.md").unwrap();
    let cells = |cell: &str| -> Vec<String> {
        cell.split(", ")
            .map(|form| form.trim().trim_matches('`').to_string())
            .filter(|f| !f.is_empty())
            .collect()
    };
    text.lines()
        .skip_while(|line| *line != "## Terms")
        .filter(|line| line.starts_with("| ") && !line.starts_with("| English"))
        .map(|line| {
            let columns: Vec<&str> = line.trim_matches('|').split(" | ").collect();
            assert_eq!(columns.len(), 3, "a glossary row has three columns: {line}");
            Term { japanese: cells(columns[1]), not_used: cells(columns[2]) }
        })
        .collect()
}

/// Every `ja` text under `value` (a lab's YAML read as JSON values).
fn japanese_texts(value: &serde_json::Value, into: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("ja", serde_json::Value::String(text)) => into.push(text.clone()),
                    _ => japanese_texts(value, into),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|item| japanese_texts(item, into)),
        _ => {}
    }
}

/// The Japanese texts to hold to the glossary, each with where it comes from.
fn texts() -> Vec<(String, String)> {
    let mut texts: Vec<(String, String)> = std::fs::read_to_string("src/i18n/ja.ftl")
        .unwrap()
        .lines()
        .enumerate()
        .map(|(n, line)| (format!("src/i18n/ja.ftl:{}", n + 1), line.to_string()))
        .collect();
    for file in files(Path::new("."), &["lab.yaml"]) {
        // A fixture broken on purpose is still read line by line below.
        let Ok(lab) = serde_saphyr::from_str::<serde_json::Value>(&std::fs::read_to_string(&file).unwrap())
        else {
            continue;
        };
        let mut found = Vec::new();
        japanese_texts(&lab, &mut found);
        texts.extend(found.into_iter().map(|text| (file.display().to_string(), text)));
    }
    texts.extend(learner_guides());
    for file in files(Path::new("."), &[".rs", ".md", ".snap", ".html", ".js", ".yaml", ".yml", ".json"]) {
        let shown = file.display().to_string();
        // The glossary names the forms it rules out; the labs' texts are read above; this file
        // names the drifts it must catch.
        let read_above = shown.ends_with(".ja.md");
        if read_above || shown.ends_with("docs/glossary.md") || shown.ends_with("tests/glossary.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (n, line) in text.lines().enumerate().filter(|(_, line)| has_japanese(line)) {
            texts.push((format!("{shown}:{}", n + 1), line.to_string()));
        }
    }
    texts
}

/// Whether `text` carries Japanese: kana, kanji or full-width punctuation.
fn has_japanese(text: &str) -> bool {
    text.chars()
        .any(|c| matches!(c, '\u{3000}'..='\u{30ff}' | '\u{4e00}'..='\u{9fff}' | '\u{ff00}'..='\u{ffef}'))
}

/// The learners' Japanese guides, a paragraph at a time (a sentence may wrap), without code blocks.
fn learner_guides() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for file in files(Path::new("./docs"), &[".ja.md"]) {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut in_code = false;
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
                continue;
            }
            if !in_code && has_japanese(line) {
                found.push((format!("{}:{}", file.display(), n + 1), line.to_string()));
            }
        }
    }
    found
}

/// Where `text` uses `form` other than as the start of one of `japanese`.
fn uses(text: &str, form: &str, japanese: &[String]) -> bool {
    text.match_indices(form).any(|(at, _)| !japanese.iter().any(|own| text[at..].starts_with(own.as_str())))
}

#[test]
fn the_japanese_texts_keep_to_the_glossary() {
    let terms = glossary();
    assert!(terms.len() >= 10 && terms.iter().all(|t| !t.japanese.is_empty()), "the glossary was read");
    let texts = texts();
    for read in ["./labs/", "./src/", "./tests/snapshots/", "./docs/labs/"] {
        assert!(texts.iter().any(|(from, _)| from.starts_with(read)), "{read} was read");
    }
    let mut found = Vec::new();
    for (from, text) in &texts {
        for term in &terms {
            for form in term.not_used.iter().filter(|form| uses(text, form, &term.japanese)) {
                found.push(format!("{from}: {form:?} (the glossary says {:?}): {text}", term.japanese));
            }
        }
    }
    assert!(found.is_empty(), "forms docs/glossary.md rules out:\n{}", found.join("\n"));
}

/// The check itself catches each drift the glossary was written against.
#[test]
fn the_glossary_check_catches_the_drifts() {
    let terms = glossary();
    let caught = |text: &str| {
        terms.iter().any(|term| term.not_used.iter().any(|form| uses(text, form, &term.japanese)))
    };
    for drift in [
        "シミュレーションのクラスタを起動します",
        "シミュレータを起動しました",
        "ユーザの kubeconfig",
        "ショートカット（近道）",
        "ノードセレクタに一致しません",
        "パラメータを指定してください",
        "近道（どれも合格しないことを selftest が確認）",
        "[設問, 2 点]",
        "あるラボ: a, b",
        "あるコンテキスト: なし",
        "node { $node }: Pod なし",
        "6s で時間切れ",
        "start が記録した事実",
    ] {
        assert!(caught(drift), "{drift}");
    }
    for fine in ["クラスター", "セレクター", "ショートカット", "クイズ", "ノード { $node }", "利用できるラボ"]
    {
        assert!(!caught(fine), "{fine}");
    }
}

/// A message's own words: without placeables, code in backticks and quotations.
fn own_words(value: &str) -> String {
    let quoted = Regex::new(r#"\{[^}]*\}|`[^`]*`|「[^」]*」|"[^"]*"|'[^']*'"#).unwrap();
    quoted.replace_all(value, "X").into_owned()
}

/// Half-width punctuation next to Japanese (`タスク (18 点)`, `前提: a, b`).
fn half_width() -> Regex {
    let japanese = r"[\p{Hiragana}\p{Katakana}\p{Han}]";
    Regex::new(&format!(r"{japanese}\s*[(),]|[(]\s*{japanese}|[)]\s*{japanese}")).unwrap()
}

/// Whether a sentence of `words` ends in the plain form (`…必要がある。`, `…修正する。`) instead of
/// です/ます: a verb's or an adjective's dictionary or past form before 。, but for the polite
/// ones (ました, でした, でしょう, ません).
fn plain_form(words: &str) -> bool {
    const PLAIN: &[&str] = &["る", "う", "く", "ぐ", "つ", "ぬ", "ぶ", "む", "だ", "ない", "た"];
    const POLITE: &[&str] = &["ました", "でした", "しょう", "ません", "ください"];
    let aside = Regex::new(r"（[^（）]*）$").unwrap();
    words.match_indices('。').any(|(at, _)| {
        // A sentence may end in an aside: `…割り当てる（resources の場合）。`
        let before = aside.replace(words[..at].trim_end(), "");
        let before = before.trim_end();
        PLAIN.iter().any(|end| before.ends_with(end)) && !POLITE.iter().any(|end| before.ends_with(end))
    })
}

/// What is wrong with the sentences of `text` (one Japanese text a learner reads): half-width
/// punctuation next to Japanese, the plain form.
fn sentence_problems(text: &str) -> Vec<&'static str> {
    let words = own_words(text);
    let mut found = Vec::new();
    if half_width().is_match(&words) {
        found.push("half-width punctuation in a Japanese sentence");
    }
    if plain_form(&words) {
        found.push("a sentence in the plain form");
    }
    found
}

/// The sentences a learner reads: every message of the Japanese catalog, every `ja:` text of the
/// labs, the Japanese guides.
fn learner_sentences() -> Vec<(String, String)> {
    let catalog = std::fs::read_to_string(Path::new("src/i18n/ja.ftl")).unwrap();
    let mut sentences: Vec<(String, String)> = catalog
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.starts_with('#'))
        .filter_map(|(n, line)| {
            Some((format!("src/i18n/ja.ftl:{}", n + 1), line.split_once(" = ")?.1.to_string()))
        })
        .collect();
    // Every lab's `ja:` texts, the fixtures' too (their reports are snapshots a reviewer reads).
    sentences.extend(texts().into_iter().filter(|(from, _)| from.ends_with("lab.yaml")));
    sentences.extend(learner_guides());
    sentences
}

/// Full-width （）and 、 next to Japanese, and sentences that end in です/ます, not in the plain
/// form: in the catalog, the labs and the guides.
#[test]
fn learners_read_full_width_punctuation_and_polite_sentences() {
    let sentences = learner_sentences();
    assert!(sentences.iter().any(|(from, _)| from.starts_with("./labs/")), "the labs were read");
    assert!(sentences.iter().any(|(from, _)| from.contains(".ja.md")), "the guides were read");
    let mut found = Vec::new();
    for (from, text) in &sentences {
        for problem in sentence_problems(text) {
            found.push(format!("{from}: {problem}: {text}"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    // A list of names in a Japanese sentence is joined with 、 (`前提: a、b`, not `前提: a, b`).
    assert!(
        std::fs::read_to_string("src/i18n/ja.ftl").unwrap().lines().any(|line| line == "list-separator = 、"),
        "the Japanese list separator is 、"
    );
    for drift in [
        "タスク (18 点)",
        "ほか, 14 個",
        "拒否され、記録されない必要がある。",
        "Pending のままである。",
        "toleration で修正する。ほかの壊れ方はロールバックします。",
        "pods/binding でノードに割り当てる（resources の場合）。",
    ] {
        assert!(!sentence_problems(drift).is_empty(), "{drift}");
    }
    for fine in
        ["タスク（18 点）", "前提: a、b", "記録されないはずです。", "`kubectl get ds (x)` で確認します。"]
    {
        assert!(sentence_problems(fine).is_empty(), "{fine}");
    }
}

/// Where Rust code outside the tests holds Japanese: each `file:line`. Comments may quote a
/// printed line; a string or a character is a word a learner would read, and those live in the
/// catalog. A module's tests start at its `#[cfg(test)]` line.
fn japanese_in_rust_code(path: &Path, source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in source.lines().enumerate() {
        if line.trim() == "#[cfg(test)]" {
            break;
        }
        if has_japanese(&code_of(line)) {
            found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
        }
    }
    found
}

/// `line` without its comment: what follows `//` outside a string or a character literal.
fn code_of(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let (mut at, mut in_string) = (0, false);
    while at < chars.len() {
        match (in_string, chars[at]) {
            (true, '\\') => at += 1,
            (_, '"') => in_string = !in_string,
            // A character literal ('"', '\'', '、'), not a lifetime ('a).
            (false, '\'') if chars.get(at + 2) == Some(&'\'') => at += 2,
            (false, '\'') if chars.get(at + 1) == Some(&'\\') => {
                at += chars[at + 2..].iter().position(|c| *c == '\'').map_or(0, |end| end + 2)
            }
            (false, '/') if chars.get(at + 1) == Some(&'/') => return chars[..at].iter().collect(),
            _ => {}
        }
        at += 1;
    }
    line.to_string()
}

/// Japanese lives in the catalog: no Rust code outside the tests writes any (`src/`, the
/// workspace's crates and the build script), and the board's page takes its words from the
/// catalog too.
#[test]
fn japanese_lives_only_in_the_catalog() {
    let mut found = Vec::new();
    let sources = files(Path::new("src"), &[".rs"])
        .into_iter()
        .chain(files(Path::new("crates"), &[".rs"]))
        .chain([Path::new("build.rs").to_path_buf()]);
    for path in sources {
        found.extend(japanese_in_rust_code(&path, &std::fs::read_to_string(&path).unwrap()));
    }
    for path in files(Path::new("src"), &[".html", ".js", ".css"]) {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate().filter(|(_, line)| has_japanese(line)) {
            found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "Japanese outside src/i18n/ja.ftl (put it in the catalog):\n{}",
        found.join("\n")
    );
    // The check sees code and leaves comments and tests alone.
    let sample = "fn a() -> &'static str {\n    \"ノード\" // ok\n}\n// ノード\nlet c = '、';\nlet s = \"// \"; let t = \"クラスター\";\n#[cfg(test)]\nmod tests { const X: &str = \"ノード\"; }\n";
    let caught: Vec<String> = japanese_in_rust_code(Path::new("x.rs"), sample);
    assert_eq!(caught.len(), 3, "{caught:?}");
    assert!(caught[0].starts_with("x.rs:2: "), "{caught:?}");
}
