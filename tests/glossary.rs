//! The Japanese texts keep to `docs/glossary.md`: no form the glossary rules out, full-width punctuation and です/ます in the catalog's sentences.
//!
//! The texts are the Japanese catalog (`src/i18n/ja.ftl`) and every `ja:` text of the built-in
//! labs (`labs/*/lab.yaml`). A form ruled out is found where it is not the start of the
//! glossary's own form, so クラスタ is caught and クラスター is not.

use std::path::Path;

use regex::Regex;

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
    for entry in std::fs::read_dir("labs").unwrap() {
        let file = entry.unwrap().path().join("lab.yaml");
        if !file.exists() {
            continue;
        }
        let lab: serde_json::Value =
            serde_saphyr::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let mut found = Vec::new();
        japanese_texts(&lab, &mut found);
        texts.extend(found.into_iter().map(|text| (file.display().to_string(), text)));
    }
    texts
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
    assert!(texts.iter().any(|(from, _)| from.starts_with("labs/")), "the labs were read");
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

/// Every message of the Japanese catalog: full-width （）and 、 next to Japanese, and sentences
/// that end in です/ます, not in the plain form.
#[test]
fn the_japanese_catalog_writes_full_width_punctuation_and_polite_sentences() {
    let japanese = r"[\p{Hiragana}\p{Katakana}\p{Han}]";
    let half_width = Regex::new(&format!(r"{japanese}\s*[(),]|[(]\s*{japanese}|[)]\s*{japanese}")).unwrap();
    let plain = Regex::new(r"(必要がある|である|ている|ない|する|できる|られる)。").unwrap();
    let catalog = std::fs::read_to_string(Path::new("src/i18n/ja.ftl")).unwrap();
    let mut found = Vec::new();
    for (n, line) in catalog.lines().enumerate() {
        let Some((_, value)) = line.split_once(" = ").filter(|_| !line.starts_with('#')) else { continue };
        let words = own_words(value);
        if half_width.is_match(&words) {
            found.push(format!("ja.ftl:{}: half-width punctuation in a Japanese sentence: {line}", n + 1));
        }
        if plain.is_match(&words) {
            found.push(format!("ja.ftl:{}: a sentence in the plain form: {line}", n + 1));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert!(
        half_width.is_match(&own_words("タスク (18 点)")) && half_width.is_match(&own_words("ほか, 14 個"))
    );
    assert!(plain.is_match("拒否され、記録されない必要がある。"));
}
