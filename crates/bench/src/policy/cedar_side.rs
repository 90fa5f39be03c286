//! The Cedar side: the generated policies as a Cedar `PolicySet`, validated against a schema,
//! and exec requests encoded as a `Command` entity (`program`, `sub`, `args`).

use std::collections::{HashMap, HashSet};
use std::str::FromStr;

use cedar_policy::{
    Authorizer, Context, Decision, Entities, Entity, EntityUid, PolicySet, Request,
    RestrictedExpression, Schema, ValidationMode, Validator,
};

use super::BenchError;
use super::rules::CEDAR_SCHEMA;

/// A validator for [`CEDAR_SCHEMA`], built once (outside every timing).
pub fn validator() -> Result<(Validator, Schema), BenchError> {
    let (schema, _warnings) =
        Schema::from_cedarschema_str(CEDAR_SCHEMA).map_err(|e| BenchError::Cedar(e.to_string()))?;
    Ok((Validator::new(schema.clone()), schema))
}

/// What compile time measures on the Cedar side: parse, then validate (strict mode).
/// Returns whether validation passed.
pub fn parse_and_validate(text: &str, validator: &Validator) -> Result<bool, BenchError> {
    let set = PolicySet::from_str(text).map_err(|e| BenchError::Cedar(e.to_string()))?;
    Ok(validator
        .validate(&set, ValidationMode::Strict)
        .validation_passed())
}

/// Parses and validates, failing with the first validation error.
pub fn policy_set(text: &str, validator: &Validator) -> Result<PolicySet, BenchError> {
    let set = PolicySet::from_str(text).map_err(|e| BenchError::Cedar(e.to_string()))?;
    let result = validator.validate(&set, ValidationMode::Strict);
    if let Some(err) = result.validation_errors().next() {
        return Err(BenchError::Cedar(format!(
            "generated policies do not validate: {err}"
        )));
    }
    Ok(set)
}

/// One exec request, encoded once.
pub struct ExecRequest {
    /// The request (principal `Agent::"bench"`, action `Action::"exec"`, resource
    /// `Command::"c"`).
    pub request: Request,
    /// The `Command::"c"` entity with its attributes.
    pub entities: Entities,
}

fn uid(text: &str) -> Result<EntityUid, BenchError> {
    EntityUid::from_str(text).map_err(|e| BenchError::Cedar(e.to_string()))
}

/// Encodes `argv` as an exec request checked against the schema.
pub fn exec_request(argv: &[String], schema: &Schema) -> Result<ExecRequest, BenchError> {
    let cedar = |e: &dyn std::fmt::Display| BenchError::Cedar(e.to_string());
    let program = argv.first().cloned().unwrap_or_default();
    let args = argv.get(1..).unwrap_or_default();
    let sub = args.first().cloned().unwrap_or_default();
    let attrs = HashMap::from([
        (
            String::from("program"),
            RestrictedExpression::new_string(program),
        ),
        (String::from("sub"), RestrictedExpression::new_string(sub)),
        (
            String::from("args"),
            RestrictedExpression::new_set(
                args.iter()
                    .map(|a| RestrictedExpression::new_string(a.clone())),
            ),
        ),
    ]);
    let resource = uid(r#"Command::"c""#)?;
    let entity = Entity::new(resource.clone(), attrs, HashSet::new()).map_err(|e| cedar(&e))?;
    let entities = Entities::from_entities([entity], Some(schema)).map_err(|e| cedar(&e))?;
    let request = Request::new(
        uid(r#"Agent::"bench""#)?,
        uid(r#"Action::"exec""#)?,
        resource,
        Context::empty(),
        Some(schema),
    )
    .map_err(|e| cedar(&e))?;
    Ok(ExecRequest { request, entities })
}

/// Decides once, outside timing: `true` for permit. Fails if evaluation raised errors (an
/// erroring policy is skipped by Cedar, which would make the comparison dishonest).
pub fn checked_decide(
    authorizer: &Authorizer,
    set: &PolicySet,
    req: &ExecRequest,
) -> Result<bool, BenchError> {
    let response = authorizer.is_authorized(&req.request, set, &req.entities);
    if let Some(err) = response.diagnostics().errors().next() {
        return Err(BenchError::Cedar(format!("evaluation error: {err}")));
    }
    Ok(response.decision() == Decision::Allow)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::rules::{cedar_text, generate};

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_string()).collect()
    }

    #[test]
    fn generated_policies_validate_at_every_size() {
        let (validator, _) = validator().unwrap();
        for n in [10, 1_000] {
            let text = cedar_text(&generate(n));
            assert!(policy_set(&text, &validator).is_ok(), "{n}");
            assert!(parse_and_validate(&text, &validator).unwrap());
        }
    }

    #[test]
    fn encodes_allow_front_deny_anywhere_and_unless() {
        let (validator, schema) = validator().unwrap();
        let text = r#"
            permit(principal, action == Action::"exec", resource) when { resource.program == "git" && (resource.sub == "status") && !resource.args.containsAny(["--force"]) };
            forbid(principal, action == Action::"exec", resource) when { resource.program == "git" && (resource.args.contains("push")) };
        "#;
        let set = policy_set(text, &validator).unwrap();
        let auth = Authorizer::new();
        let decide = |words: &[&str]| {
            checked_decide(&auth, &set, &exec_request(&argv(words), &schema).unwrap()).unwrap()
        };
        assert!(decide(&["git", "status", "-s"]));
        assert!(!decide(&["git", "-C", "x", "status"]));
        assert!(!decide(&["git", "status", "--force"]));
        assert!(!decide(&["git", "status", "push"]));
        assert!(!decide(&["ls"]));
    }
}
