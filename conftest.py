pytest_plugins = ["kvgate.orchestration.pytest_plugin"]
