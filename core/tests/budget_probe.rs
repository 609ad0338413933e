//! `Operation::would_draw_on_budget`: whether the decision `judged` would make takes a retry
//! from the gate's budget — asked on a copy, so the decision itself is the same afterwards.

use std::time::Duration;

use recuo::{Cause, Gate, GiveUpReason, Operation, Policy, RetryBudget, Step, Verdict};

fn retry() -> Verdict {
    Verdict::Retry {
        cause: Cause::ServerError,
        server_wait: None,
    }
}

fn policy(max_attempts: u32) -> Policy {
    Policy::builder()
        .max_attempts(max_attempts)
        .base(Duration::from_millis(100))
        .deadline(Some(Duration::from_secs(10)))
        .build()
        .unwrap()
}

/// An operation at its first Classify step, seeded.
fn classifying(policy: &Policy, gate: Option<Gate>) -> Operation {
    let mut op = Operation::new(policy).seed(Some(7));
    if let Some(g) = gate {
        op = op.gate(g);
    }
    assert!(matches!(
        op.start(0, 0),
        Step::Call { .. } | Step::Enter { .. }
    ));
    assert!(matches!(op.failed(5), Step::Classify { .. }));
    op
}

#[test]
fn asked_only_for_a_retry_the_budget_would_pay_for() {
    let budget = || Gate::new().with_budget(RetryBudget::new(0.0, 1.0, 10).unwrap());
    // No budget, no draw.
    assert!(!classifying(&policy(3), None).would_draw_on_budget(5, &retry()));
    // A retry the policy allows: a draw.
    assert!(classifying(&policy(3), Some(budget())).would_draw_on_budget(5, &retry()));
    // A give-up, or no attempt left: none.
    let give_up = Verdict::GiveUp {
        cause: Cause::Permanent,
    };
    assert!(!classifying(&policy(3), Some(budget())).would_draw_on_budget(5, &give_up));
    assert!(!classifying(&policy(1), Some(budget())).would_draw_on_budget(5, &retry()));
    // A wait past the deadline gives up first: none.
    let late = Verdict::Retry {
        cause: Cause::RateLimited,
        server_wait: Some(recuo::ServerWait::Ms(60_000)),
    };
    assert!(!classifying(&policy(3), Some(budget())).would_draw_on_budget(5, &late));
}

#[test]
fn asking_changes_nothing_the_decision_then_makes() {
    let gate = || Gate::new().with_budget(RetryBudget::new(0.0, 1.0, 10).unwrap());
    let mut asked = classifying(&policy(3), Some(gate()));
    let mut plain = classifying(&policy(3), Some(gate()));
    assert!(asked.would_draw_on_budget(5, &retry()));
    let (a, b) = (
        asked.judged(5, retry(), None),
        plain.judged(5, retry(), None),
    );
    assert_eq!(a, b, "the same seeded delay");
    assert!(matches!(a, Step::Sleep { delay_ms, .. } if delay_ms <= 100));
    // The budget's one retry a second is spent: the next draw is refused by the budget.
    let empty = Gate::new().with_budget(RetryBudget::new(0.0, 0.0, 10).unwrap());
    let mut refused = classifying(&policy(3), Some(empty));
    assert!(refused.would_draw_on_budget(5, &retry()));
    assert!(matches!(
        refused.judged(5, retry(), None),
        Step::GaveUp {
            reason: GiveUpReason::BudgetExhausted,
            ..
        }
    ));
}
