"""The names of the replication planner's methods, apart from the planner (numpy, scipy), so
that ``awl --help`` lists them without importing it."""

REPLICATION_METHODS = ("best", "greedy", "greedy+local", "lp+local")
"""`plan_replication`'s methods: ``best`` (the default) runs the local search from every start
and keeps the best plan; ``greedy`` is the agglomeration alone; ``greedy+local`` and
``lp+local`` run the local search from one start."""
