//! Renders results for humans (colour, progress), as versioned JSON and as JUnit XML.
