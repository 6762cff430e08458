"""`python -m conformance.selfcheck`: run the mutation campaign (see campaign.py)."""

import sys

from conformance.selfcheck.campaign import main

sys.exit(main())
