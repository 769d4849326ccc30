"""Tools: typed functions as tools, their schemas, argument checks and invocation."""
