import Clients
import MacroRuntime
import Platform
import Synchronization

/// `apimacro run --watch MACRO`: the macro again each time its file, or a module it imported
/// from its folder, is saved; inotify events wake the wait (no polling), as does Ctrl-C.
enum FileWatch {
    /// What changes a file's content or brings it (back) into being: a write closed, a rename
    /// onto it (an editor's safe save), a creation, `touch`; and its removal.
    static let mask: UInt32 = UInt32(
        IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ATTRIB | IN_DELETE | IN_MOVED_FROM)

    /// Runs the macro, then again after each change, until Ctrl-C or SIGTERM; returns 0 then.
    ///
    /// A run that Ctrl-C ended ends the watch too.
    static func run(file: URL, quiet: Bool, cycle: () throws -> Int32) throws -> Int32 {
        let macro = file.standardizedFileURL.resolvingSymlinksInPath()
        let folder = macro.deletingLastPathComponent()
        let notifier = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard notifier >= 0 else {
            throw MacroError(
                "--watch: cannot watch files (inotify: \(String(cString: strerror(errno)))); "
                    + "raise fs.inotify.max_user_instances or run without --watch")
        }
        defer { close(notifier) }
        Watch.makeWakePipe()
        let previous = (signal(SIGINT, Watch.onSignal), signal(SIGTERM, Watch.onSignal))
        defer {
            signal(SIGINT, previous.0)
            signal(SIGTERM, previous.1)
        }
        var folders: [Int32: URL] = [:]
        // The macro's folder from the start: a save during the first run is seen after it.
        let first = inotify_add_watch(notifier, folder.path, mask)
        guard first >= 0 else {
            throw MacroError(
                "--watch: cannot watch \(folder.path) (\(String(cString: strerror(errno)))); "
                    + "raise fs.inotify.max_user_watches or run without --watch")
        }
        folders[first] = folder
        var number = 0
        var changed: [String] = []
        while Watch.stopping.load(ordering: .relaxed) == 0 {
            number += 1
            if !quiet {
                let stamp = UTCDates.timestamp(Date().timeIntervalSince1970)
                let reason = changed.isEmpty ? "" : ": \(changed.joined(separator: ", ")) changed"
                write("\(number == 1 ? "" : "\n")--- run \(number), \(stamp)\(reason)\n", to: STDOUT_FILENO)
            }
            let code = try cycle()
            signal(SIGINT, Watch.onSignal)
            signal(SIGTERM, Watch.onSignal)
            if Watch.stoppedCodes.contains(code) { break }
            // The macro and the modules it imported from its folder, forgotten so the next run
            // imports them afresh; each one's folder watched.
            let files = [macro] + Debugging.forgetLocalModules(in: [folder]).map { $0.resolvingSymlinksInPath() }
            let watched = Set(files.map(\.path))
            for directory in Set(files.map { $0.deletingLastPathComponent().path })
            where !folders.values.contains(where: { $0.path == directory }) {
                // The same folder again gives the same watch.
                let descriptor = inotify_add_watch(notifier, directory, mask)
                if descriptor >= 0 {
                    folders[descriptor] = URL(fileURLWithPath: directory)
                } else {
                    write(
                        "apimacro: warning: cannot watch \(directory) (\(String(cString: strerror(errno)))); "
                            + "a change there does not rerun the macro (raise fs.inotify.max_user_watches)\n",
                        to: STDERR_FILENO)
                }
            }
            if !quiet {
                let others = watched.count - 1
                let modules = others == 0 ? "" : " and \(others) module\(others == 1 ? "" : "s") it imports"
                write(
                    "apimacro: watching \(macro.lastPathComponent)\(modules) for changes (Ctrl-C stops)\n",
                    to: STDERR_FILENO)
            }
            guard let next = waitForChange(notifier, folders: folders, watched: watched, macro: macro)
            else { break }
            changed = next
        }
        return 0
    }

    /// Waits until one of `watched` (paths) changed and the macro file exists; returns the names
    /// of the files that changed, or nil when a signal ended the watch.
    private static func waitForChange(
        _ notifier: Int32, folders: [Int32: URL], watched: Set<String>, macro: URL
    ) -> [String]? {
        var changed: [String] = []
        var deleted = false
        while true {
            // Once something changed, a moment for the rest of the same save (an editor writes,
            // renames and sets attributes in a row) to arrive before running.
            guard let events = readEvents(notifier, timeout: changed.isEmpty ? -1 : 100) else { return nil }
            var relevant = false
            for (descriptor, name) in events {
                guard let directory = folders[descriptor],
                    watched.contains(directory.appendingPathComponent(name).path)
                else { continue }
                relevant = true
                if !changed.contains(name) { changed.append(name) }
            }
            if changed.isEmpty || (relevant && !events.isEmpty) { continue }
            guard FileManager.default.fileExists(atPath: macro.path) else {
                if !deleted {
                    write(
                        "apimacro: \(macro.path) was deleted; waiting for it to come back (Ctrl-C stops)\n",
                        to: STDERR_FILENO)
                    deleted = true
                }
                changed = []
                continue
            }
            if deleted { write("apimacro: \(macro.path) is back\n", to: STDERR_FILENO) }
            return changed
        }
    }

    /// The events that arrive within `timeout` ms (-1: until one does) as (watch, name); an
    /// empty list when none came in time, nil when a signal ended the watch.
    private static func readEvents(_ notifier: Int32, timeout: Int32) -> [(Int32, String)]? {
        let wake = Watch.wakeReader.load(ordering: .relaxed)
        var pollers = [
            pollfd(fd: notifier, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&pollers, 2, timeout)
        if Watch.stopping.load(ordering: .relaxed) != 0 { return nil }
        if pollers[1].revents & Int16(POLLIN) != 0 {
            var drained = [UInt8](repeating: 0, count: 64)
            _ = read(wake, &drained, drained.count)
        }
        guard ready > 0, pollers[0].revents & Int16(POLLIN) != 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = read(notifier, &buffer, buffer.count)
        guard count > 0 else { return [] }
        var events: [(Int32, String)] = []
        let header = MemoryLayout<inotify_event>.size
        var offset = 0
        buffer.withUnsafeBytes { bytes in
            while offset + header <= count {
                let descriptor = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let nameBytes = bytes[(offset + header)..<min(offset + header + length, count)]
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                if !name.isEmpty { events.append((descriptor, name)) }
                offset += header + length
            }
        }
        return events
    }

    private static func write(_ text: String, to descriptor: Int32) {
        descriptor == STDOUT_FILENO ? StandardStreams.output(text) : StandardStreams.error(text)
    }
}
