//! `labs list|show`: the available labs, and one lab's briefing, stages and tasks.

use super::{Error, Result, print};
use crate::{engine, lab, session::Session};

/// What `labs` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Options {
    /// `labs list`.
    List,
    /// `labs show LAB [--variant V | --reveal]`.
    Show {
        /// The lab id.
        lab: String,
        /// Instructors: also what this variant breaks and the answers it accepts.
        variant: Option<String>,
        /// Instructors: also the quiz answers (every variant's) and the shortcuts.
        reveal: bool,
    },
}

/// `labs list` or `labs show`.
pub fn run(session: &Session, options: &Options) -> Result<u8> {
    let lang = session.lang;
    match options {
        Options::List => {
            let bundles = lab::loader::load_all(&session.labs)?;
            let course = lab::loader::course(&session.labs)?;
            print(&lab::show::list(&bundles, course.as_ref(), &session.labs, lang))
        }
        Options::Show { lab, variant, reveal } => {
            let bundle = lab::loader::find(&session.labs, lab)?;
            let mut text = lab::show::show(&bundle, lang);
            if *reveal && variant.is_none() {
                text.push_str(&lab::show::show_revealed(&bundle, None, lang));
            }
            if let Some(wanted) = variant {
                let Some(variant) = bundle.lab.variant(wanted) else {
                    let known: Vec<&str> = bundle.lab.variants.iter().map(|v| v.id.value.as_str()).collect();
                    let known = crate::i18n::list(&known);
                    return Err(Error::Engine(engine::Error::BadInput(crate::msg!(
                        "error-unknown-variant",
                        lab = lab,
                        variant = format!("{wanted:?}"),
                        known = known
                    ))));
                };
                text.push_str(&lab::show::show_revealed(&bundle, Some(variant), lang));
            }
            print(&text)
        }
    }
}
