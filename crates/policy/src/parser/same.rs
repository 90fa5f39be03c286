//! Equality ignoring spans.
