"""Durable execution of agent runs on an external engine (docs/design/sessions.md).

``agents.durable.dbos`` runs an ``AgentLoop`` as a DBOS workflow (install the ``dbos``
extra). Nothing is imported here, so ``import agents`` never loads DBOS.
"""
