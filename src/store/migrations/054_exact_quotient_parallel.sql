-- tokenmarket schema, version 54: exact_quotient (migration 053) is not safe in a parallel worker:
-- its EXCEPTION block starts a subtransaction at each call, which Postgres allows only in the
-- leader. Marked so, the planner never sends it to a worker.
ALTER FUNCTION exact_quotient(numeric, numeric) PARALLEL UNSAFE;
