"""The drive's state and rules as plain Python: users, departments, folders, versioned documents, grants, the
clock and change feed (``drive.state``), who may do what (``drive.permissions``, decided by Casbin) and tokens."""
