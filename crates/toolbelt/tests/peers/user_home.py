"""A home of its own for the toolbelt the OAuth scripts run: a temporary HOME and XDG
directories, a project (a git root) to run in, the user's settings written, and no browser or
display inherited."""

import os
import tempfile


def make(prefix, settings):
    """Returns (home, project, env): `settings` is the user's config.toml."""
    home = tempfile.mkdtemp(prefix=prefix)
    project = os.path.join(home, "project")
    os.makedirs(os.path.join(project, ".git"))
    os.makedirs(os.path.join(home, "config", "toolbelt"))
    with open(os.path.join(home, "config", "toolbelt", "config.toml"), "w") as f:
        f.write(settings)
    env = {k: v for k, v in os.environ.items() if k not in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")}
    env.update(
        HOME=home,
        XDG_CONFIG_HOME=os.path.join(home, "config"),
        XDG_STATE_HOME=os.path.join(home, "state"),
        XDG_DATA_HOME=os.path.join(home, "data"),
        XDG_CACHE_HOME=os.path.join(home, "cache"),
    )
    return home, project, env
