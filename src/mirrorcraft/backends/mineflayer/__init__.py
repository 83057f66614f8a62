"""The real-server backend: a Mineflayer body (the Node bridge in ``bridge/``) on Minecraft 1.19.

``saves`` builds the saves (``mirrorcraft server prepare``), ``server`` runs one server
process, ``rcon`` talks to it, ``preflight`` checks it before an episode, ``bridge`` drives
the Node bridge, ``episode`` is the ``SimEpisode``-shaped episode and ``backend`` ties them
together per episode. ``fake_server``, ``rcon_server`` and ``fakes`` are test doubles.
See docs/real_server.md.
"""
