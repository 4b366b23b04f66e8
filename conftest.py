pytest_plugins = ["kvgate.pytest_plugin"]
