public import Foundation
public import NIOSSL

/// A certificate authority made for one test with Debian's `openssl`, in a temporary folder:
/// `ca.pem` (the CA a client is told to trust) and a server certificate it signed for
/// `IP:127.0.0.1`, `IP:127.0.0.2` and `DNS:localhost` (the test server's two listeners),
/// with its key.
///
/// Each CA has a name of its own (OpenSSL finds an issuer by its name). Nothing here is trusted
/// by the system; `remove()` deletes the folder.
public final class TestCertificateAuthority: Sendable {
    /// The temporary folder holding the files.
    public let folder: URL
    /// The CA's certificate (PEM): what `APIMACRO_CA_BUNDLE` or `SSL_CERT_FILE` names.
    public let caFile: URL
    /// The server's certificate (PEM), signed by the CA.
    public let certificateFile: URL
    /// The server's private key (PEM).
    public let keyFile: URL

    /// Makes the CA and the server certificate (EC P-256, valid for two days).
    ///
    /// Throws `ProcessFailure` with `openssl`'s own words when it is missing or
    /// fails.
    public init() throws {
        let name = UUID().uuidString
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-ca-\(name)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        caFile = folder.appendingPathComponent("ca.pem")
        certificateFile = folder.appendingPathComponent("server.pem")
        keyFile = folder.appendingPathComponent("server.key")
        let extensions = folder.appendingPathComponent("server.ext")
        try """
        subjectAltName = IP:127.0.0.1, IP:127.0.0.2, DNS:localhost
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = serverAuth
        """.write(to: extensions, atomically: true, encoding: .utf8)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Self.openssl(
            ["req", "-x509"] + curve + [
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=apimacro test CA \(name.prefix(8))",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ], in: folder)
        try Self.openssl(
            ["req"] + curve + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"], in: folder)
        try Self.openssl(
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "server.pem", "-days", "2", "-extfile", "server.ext",
            ], in: folder)
    }

    /// The server side of TLS with this CA's server certificate.
    public func serverContext() throws -> NIOSSLContext {
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificateFile.path).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: keyFile.path, format: .pem)))
        return try NIOSSLContext(configuration: configuration)
    }

    /// Names each PEM certificate in `folder` by its subject's hash (`openssl rehash`): the
    /// form of a CA directory (libcurl's `CURLOPT_CAPATH`, /etc/ssl/certs).
    public static func rehash(_ folder: URL) throws {
        try openssl(["rehash", folder.path], in: folder)
    }

    /// Deletes the folder and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: folder)
    }

    private static func openssl(_ arguments: [String], in folder: URL) throws {
        let errors = Pipe()
        let process = try Spawned(
            "/usr/bin/env", ["openssl"] + arguments, environment: ProcessInfo.processInfo.environment,
            directory: folder.path, stderr: .descriptor(errors.fileHandleForWriting.fileDescriptor))
        try errors.fileHandleForWriting.close()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        let exit = process.waitUntilExit()
        guard exit.status == 0, !exit.signalled else {
            throw ProcessFailure(
                "openssl \(arguments.prefix(2).joined(separator: " ")) failed (exit \(exit.status)): "
                    + "\(String(decoding: message, as: UTF8.self)); install it with scripts/setup-system")
        }
    }
}
