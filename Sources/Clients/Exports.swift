// Clients is the layer MacroRuntime and PluginHost build on; the request,
// response and error types of WebAPI are part of its vocabulary.
@_exported import WebAPI
