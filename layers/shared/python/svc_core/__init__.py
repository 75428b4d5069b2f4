"""The shared layer of the service, one package per role. Imports point down this list (a package
imports only those its __init__ names; tests/unit/test_layer_imports.py checks it):

    http       the HTTP machinery every API function shares: admission, envelope, errors, CORS, parameter
               markers, HTML pages
    domain     the service's rules, events, each area's fields and request/response models; no AWS client
    auth       access: credentials, tokens, the caller's context, scopes, roles, rate limits, tenant policy
    data       one module per DynamoDB table or SQS queue
    adapters   AWS clients, sealing, secrets, storage (platform and BYOS), payments, models, outbound HTTP
    contracts  what every layer applies alike: plans, regions, the event envelope, cursors, e-mail, rotation
    platform   settings, ids, time, logging, the error vocabulary

The functions (functions/<group>/app.py) import http and domain (and what those hand them), never
a data module directly.
"""
