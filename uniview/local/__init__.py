"""Local stand-ins for the cloud services, used by `uniview demo` and the tests."""
