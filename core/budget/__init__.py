"""Run budgets: a durable allowance of semantic query preparation per run (``recall.run_budget``)."""

from .ledger import Allowance, Reservation, RunLedger, RunState, refusal, run_key
from .preparation import Handle, Prepared, RunBudget, fit_tokens

__all__ = ["Allowance", "Handle", "Prepared", "Reservation", "RunBudget", "RunLedger", "RunState", "fit_tokens",
           "refusal", "run_key"]
