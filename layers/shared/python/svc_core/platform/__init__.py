"""Platform: what any service needs and nothing of this one's rules. Settings (config: the
environment, read once), ids, time (timeutil: the one clock tests travel), logging (log: JSON
lines, credentials scrubbed) and the error vocabulary (errors: each code and its HTTP status).

May import: nothing else of svc_core (every other package may import this one).
"""
