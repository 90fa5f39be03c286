//! Validation and compilation of layers into an immutable [`PolicySet`], and `decide`.

use crate::decision::{
    Context, Decision, Grants, LayerKind, LayerSource, Part, Request, RuleRef, Subject,
};
use crate::ast::Verdict;
use crate::error::{Code, Diagnostic, Diagnostics};

/// What was loaded for one layer, for `explain`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LayerInfo {
    /// The layer.
    pub kind: LayerKind,
    /// Its files' display names.
    pub files: Vec<String>,
}

/// Compiled, immutable layers. Cheap to share between threads.
#[derive(Debug, Clone)]
pub struct PolicySet {
    layers: Vec<LayerInfo>,
    rules: Vec<RuleRef>,
}

/// Parses, validates and compiles layers (top first), then checks every file's examples.
///
/// # Errors
/// Every diagnostic of every file; nothing compiles if any file has an error.
pub fn compile(layers: &[LayerSource]) -> Result<PolicySet, Diagnostics> {
    let _ = layers;
    Err(Diagnostics(vec![Diagnostic::new(Code::Source, "-", "", 0..0, "compiler not built yet")]))
}

impl PolicySet {
    /// Decides one request. Never panics; what cannot be decided is denied with the reason.
    pub fn decide(&self, request: &Request<'_>, ctx: &Context) -> Decision {
        let _ = (request, ctx);
        Decision {
            verdict: Verdict::Deny,
            tier: None,
            reason: String::from("compiler not built yet"),
            rules: vec![],
            parts: vec![Part {
                subject: Subject::Request { problem: String::from("not built") },
                verdict: Verdict::Deny,
                tier: None,
                reason: String::new(),
                rules: vec![],
                span: None,
            }],
            grants: Grants::default(),
        }
    }

    /// Every rule of every layer, indexed by [`RuleRef::id`].
    pub fn rules(&self) -> &[RuleRef] {
        &self.rules
    }

    /// The layers, top first.
    pub fn layers(&self) -> &[LayerInfo] {
        &self.layers
    }
}
