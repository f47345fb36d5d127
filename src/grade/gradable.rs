//! The loader's question "can grading judge this expectation?", answered by grading itself.
//!
//! [`Gradable`] is declared by the lab layer and implemented here, so a bundle is refused at load
//! time with the very message grading would give, while `lab` never imports `grade`.

use super::{partial::show, path::FieldPath, prepare_match, prepare_quantity};
use crate::{
    i18n::{Localized, Message},
    k8s::quantity::Quantity,
    lab::{
        loader::{ExpectedFiles, Gradable},
        model::{FactCapture, MatchExpectation, QuantityExpectation, QuotaInForceCheck},
    },
    msg,
};

impl Gradable for MatchExpectation {
    fn gradable(&self, files: &ExpectedFiles) -> Result<(), Message> {
        prepare_match(self, files).map(drop).map_err(|e| e.message())
    }
}

impl Gradable for QuantityExpectation {
    fn gradable(&self, _: &ExpectedFiles) -> Result<(), Message> {
        prepare_quantity(self).map(drop).map_err(|e| e.message())
    }
}

impl Gradable for FactCapture {
    /// `engine::start` reads a fact's value at its path.
    fn gradable(&self, _: &ExpectedFiles) -> Result<(), Message> {
        match &self.path {
            Some(path) => path.value.parse::<FieldPath>().map(drop).map_err(|e| e.message()),
            None => Ok(()),
        }
    }
}

impl Gradable for QuotaInForceCheck {
    /// `builtin::quota_in_force` compares `hard` as a quantity.
    fn gradable(&self, _: &ExpectedFiles) -> Result<(), Message> {
        match Quantity::from_json(&self.hard) {
            Ok(_) => Ok(()),
            Err(_) => Err(msg!("grade-error-hard-not-a-quantity", value = show(&self.hard))),
        }
    }
}
