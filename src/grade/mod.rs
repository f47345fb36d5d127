//! Matchers that compare observed cluster objects with a lab's expectations.
