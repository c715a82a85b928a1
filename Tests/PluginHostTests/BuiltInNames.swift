/// The built-in clients' names, as Clients' BuiltInClients.names lists them and MacroRuntime passes them to the plugin loader.
let builtInNames: Set<String> = ["github", "instagram", "shortener", "http"]
