"""At import, patch the builtins and json that a harness would use, to forge a passing report.

Expected: the child's harness keeps its own references, the correct scheduler's trace comes back
unchanged (ok), and a forged report would be rejected by the parent anyway.
"""
import builtins
import json

_forged = '{"type":"trace","workload":0,"steps":[],"stop":"done","error":null}'
json.dumps = lambda *args, **kwargs: _forged
json.JSONEncoder.encode = lambda self, o: _forged
builtins.isinstance = lambda obj, kind: True
builtins.issubclass = lambda obj, kind: True
builtins.getattr = lambda obj, name, *default: 0
builtins.sorted = lambda items, **kwargs: []
