"""Money: budgets and the ledger (reserve at create, settle at success, release otherwise)."""
