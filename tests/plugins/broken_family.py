"""A plug-in whose import fails (with a message on two lines): its entry point is skipped."""

raise RuntimeError("this plug-in needs a service that is not running\n(second line)")
