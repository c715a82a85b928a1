public import Platform

extension FileManager {
    /// Whether something exists at `path` (links followed), and in `isFolder` whether it is a
    /// folder: `fileExists(atPath:isDirectory:)`, whose flag is a `Bool` in FoundationEssentials
    /// and an `ObjCBool` in Foundation proper.
    public func fileExists(atPath path: String, isFolder: inout Bool) -> Bool {
        #if canImport(FoundationEssentials)
            var isDirectory = false
            let exists = fileExists(atPath: path, isDirectory: &isDirectory)
            isFolder = isDirectory
        #else
            var isDirectory: ObjCBool = false
            let exists = fileExists(atPath: path, isDirectory: &isDirectory)
            isFolder = isDirectory.boolValue
        #endif
        return exists
    }
}
