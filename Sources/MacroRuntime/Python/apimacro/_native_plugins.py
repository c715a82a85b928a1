# The plugins' Python half: the client base class, one generated subclass per
# plugin (built the first time the plugin is used, so start-up pays nothing),
# ``plugin.py`` functions as methods, ``plugins`` and ``client``.
#
# Not a module to import: at start-up the host reads this file and executes it
# in the namespace of ``_apimacro`` (PluginBinding.install, which then calls ``_install_plugins``), where the exception classes are already defined.
#

import _collections_abc as _abc  # what collections.abc re-exports; already loaded, unlike collections

class PluginClient:
    """A web API declared by a plugin's plugin.toml (see `apimacro plugins show NAME`)."""

    _endpoint_names = ()

    def __init__(self, native, name, plugin_py):
        self._native = native
        self._name = name
        self._plugin_py = plugin_py
        self._functions = None

    @property
    def name(self):
        """The plugin's name."""
        return self._name

    @property
    def endpoints(self):
        """The names of the declared endpoints."""
        return list(self._endpoint_names)

    def call(self, endpoint, /, *, cache=None, **params):
        """call(endpoint, *, cache=None, **params) -> a dict, or a lazy iterator over every page when the payload is a list.

        limit=N stops an iterator early (unless the endpoint declares a parameter named limit);
        cache= is the call's cache rule ("1h", "refresh", "only-if-cached", False), as on every client."""
        return self._native.call(endpoint, _cache=cache, **params)

    def get(self, path, params=None, headers=None, *, cache=None):
        """get(path, params=None, headers=None, *, cache=None) -> the decoded JSON of one GET relative to the base URL."""
        return self._native.get(path, params, headers, _cache=cache)

    def paginate(self, path, params=None, limit=None, result=None, *, cache=None):
        """paginate(path, params=None, limit=None, result=None, *, cache=None) -> iterator over every item of every page.

        result is the JSON path of the list in each page ("data.items"); None means the body itself."""
        return self._native.paginate(path, params, limit, result, _cache=cache)

    def as_account(self, label):
        """as_account(label) -> a client of the same plugin using the stored account `label`.

        The account is one `apimacro login NAME --account LABEL` stored (apimacro auth status lists them);
        it is used even where the plugin's variable is set. An unknown label raises AuthError naming
        the accounts stored."""
        return type(self)(self._native.as_account(label), self._name, self._plugin_py)

    def _plugin_functions(self):
        if self._functions is None:
            functions = {}
            if self._plugin_py:
                import importlib.util, inspect, sys
                module_name = "apimacro_plugin_" + self._name
                spec = importlib.util.spec_from_file_location(module_name, self._plugin_py)
                module = importlib.util.module_from_spec(spec)
                sys.modules[module_name] = module
                spec.loader.exec_module(module)
                for attribute, value in vars(module).items():
                    if attribute.startswith("_") or not inspect.isfunction(value) or value.__module__ != module_name:
                        continue
                    if hasattr(type(self), attribute):
                        raise ImportError(f"{self._plugin_py}: {attribute}() has the name of an endpoint or a client method; rename it")
                    functions[attribute] = value
            self._functions = functions
        return self._functions

    def __getattr__(self, attribute):
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        function = self._plugin_functions().get(attribute)
        if function is None:
            raise AttributeError(f"plugin client {self._name!r} has no attribute {attribute!r}")
        import types
        return types.MethodType(function, self)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._plugin_functions()))

    def __repr__(self):
        return repr(self._native)

PluginClient.__module__ = "apimacro"

def _endpoint_method(class_name, name, params, required, takes_limit, doc):
    import inspect, keyword
    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if all(p.isidentifier() and not keyword.iskeyword(p) for p in params):
        parameters = [self_parameter] + [
            inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD, **({} if r else {"default": None}))
            for p, r in zip(params, required)
        ]
        if takes_limit:
            parameters.append(inspect.Parameter("limit", inspect.Parameter.KEYWORD_ONLY, default=None))
        if "cache" not in params:
            parameters.append(inspect.Parameter("cache", inspect.Parameter.KEYWORD_ONLY, default=None))
        keywords = None
    else:
        parameters = [self_parameter, inspect.Parameter("params", inspect.Parameter.VAR_KEYWORD)]
        keywords = "params"
    signature = inspect.Signature(parameters)

    def method(self, *args, **kwargs):
        arguments = dict(signature.bind_partial(self, *args, **kwargs).arguments)
        del arguments["self"]
        if keywords:
            arguments = arguments.get(keywords, {})
        cache = None if "cache" in params else arguments.pop("cache", None)
        return self._native.call(name, _cache=cache, **arguments)

    method.__name__ = name
    method.__qualname__ = f"{class_name}.{name}"
    method.__doc__ = doc
    method.__signature__ = signature
    method.__module__ = "apimacro"
    return method

def _make_plugin_client(native, name, doc, endpoints, plugin_py):
    class_name = "".join(part.capitalize() for part in name.split("_")) + "Client"
    namespace = {"__doc__": doc, "__module__": "apimacro", "_endpoint_names": tuple(e[0] for e in endpoints)}
    for endpoint, params, required, takes_limit, help_text in endpoints:
        namespace[endpoint] = _endpoint_method(class_name, endpoint, params, required, takes_limit, help_text)
    return type(class_name, (PluginClient,), namespace)(native, name, plugin_py)

class _Plugins(_abc.Mapping):
    """The loaded plugins: name -> client (each built the first time it is used)."""

    def __init__(self, specs):
        self._specs = specs
        self._clients = {}

    def __getitem__(self, name):
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = _make_plugin_client(*self._specs[name])
        return client

    def __iter__(self):
        return iter(sorted(self._specs))

    def __len__(self):
        return len(self._specs)

    def __repr__(self):
        return f"<apimacro plugins: {', '.join(sorted(self._specs)) or 'none'}>"

def _install_plugins(natives, specs, failures):
    global plugins, _plugin_failures
    plugins = _Plugins({spec[0]: (native,) + tuple(spec) for native, spec in zip(natives, specs)})
    _plugin_failures = dict(failures)

def client(name):
    """client(name) -> the client of the plugin called name (see `apimacro plugins list`).

    ImportError when the plugin did not load (the message says why), LookupError when there is none."""
    if name in plugins:
        return plugins[name]
    if name in _plugin_failures:
        raise ImportError(f"plugin {name!r} did not load: {_plugin_failures[name]}")
    raise LookupError(f"no plugin named {name!r}; loaded plugins: {', '.join(plugins) or 'none'} (see apimacro plugins list)")
