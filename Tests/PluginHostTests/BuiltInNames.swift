/// The built-in clients' names, as MacroRuntime's ClientRegistry passes them to the plugin loader.
let builtInNames: Set<String> = ["github", "instagram", "shortener", "http"]
