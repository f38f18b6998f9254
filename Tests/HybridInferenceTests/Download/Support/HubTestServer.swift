import Foundation
import GeminiServerProcess
import TestPrerequisites
import XCTest

@testable import HybridInferenceLlama

/// The loopback hub and CDN (Tests/HubServer/hub_server.py) serving the tiny
/// test model, with what a test needs to check the wire: the served bytes and
/// their sha256 in both versions (version 2 is the file with its last byte
/// xor 0xFF), and huggingface_hub as the reference client.
final class HubTestServer: Sendable {
  /// The token private repositories want.
  static let token = "hf_loopbackSECRETtoken0123456789"

  let server: HubServerProcess
  /// The bytes every repository serves (version 1).
  let bytes: [UInt8]
  /// The sha256 (hex) of version 1 and version 2, by version.
  let sha256: [Int: String]

  var hubPort: Int { server.hubURL.port ?? 0 }
  var cdnPort: Int { server.cdnURL.port ?? 0 }

  /// Version 2 of the bytes: the last byte flipped.
  var bytesVersion2: [UInt8] {
    var flipped = bytes
    if let last = flipped.indices.last { flipped[last] ^= 0xFF }
    return flipped
  }

  /// Starts the server on the tiny model; what is missing, else.
  static func start() -> Result<HubTestServer, HubTestUnavailable> {
    let environment = ProcessInfo.processInfo.environment
    let model =
      environment["HYBRID_TEST_TINY_MODEL"]
      ?? DefaultModelLocation.cacheDirectory(environment: environment) + "/models/tiny-random-llama.gguf"
    guard let data = FileManager.default.contents(atPath: model), data.count >= 1024 else {
      return .failure(HubTestUnavailable("the tiny test model at \(model) (`make test` provisions it)"))
    }
    do {
      let server = try HubServerProcess(file: URL(fileURLWithPath: model), token: token)
      let digests = try run(
        "/usr/bin/env",
        [
          "python3", "-c",
          "import hashlib,sys; d=open(sys.argv[1],'rb').read(); "
            + "print(hashlib.sha256(d).hexdigest()); print(hashlib.sha256(d[:-1]+bytes([d[-1]^255])).hexdigest())",
          model,
        ], environment: environment)
      let lines = digests.stdout.split(separator: "\n").map(String.init)
      guard digests.status == 0, lines.count == 2 else {
        server.stop()
        return .failure(HubTestUnavailable("python3 hashing the model: \(digests.stderr)"))
      }
      return .success(HubTestServer(server: server, bytes: [UInt8](data), sha256: [1: lines[0], 2: lines[1]]))
    } catch {
      return .failure(HubTestUnavailable("python3 for the loopback hub server (\(error))"))
    }
  }

  private init(server: HubServerProcess, bytes: [UInt8], sha256: [Int: String]) {
    self.server = server
    self.bytes = bytes
    self.sha256 = sha256
  }

  /// A HEAD (or GET) of the hub's resolve URL, redirects not followed.
  func hub(
    _ method: String = "HEAD", repository: String, revision: String = "main", path: String = "model.gguf",
    headers: [(String, String)] = []
  ) throws -> RawHTTPExchange {
    let url = try server.resolveURL(repository: repository, revision: revision, path: path)
    return try RawHTTPExchange.send(port: hubPort, method, Self.target(url), headers: headers)
  }

  /// A request to the CDN URL `location` (absolute, as the hub's Location gives it).
  func cdn(
    _ location: String, method: String = "GET", headers: [(String, String)] = [], bodyLimit: Int? = nil
  ) throws -> RawHTTPExchange {
    let url = try XCTUnwrap(URL(string: location), "no URL: \(location)")
    XCTAssertEqual(url.port, cdnPort, "\(location) is not on the CDN")
    return try RawHTTPExchange.send(port: cdnPort, method, Self.target(url), headers: headers, bodyLimit: bodyLimit)
  }

  /// The hub's CDN location for `repository`, from a HEAD.
  func location(_ repository: String) throws -> String {
    let head = try hub(repository: repository)
    XCTAssertEqual(head.status, 302)
    return try XCTUnwrap(head.header("Location"), "no Location for \(repository)")
  }

  /// A plain CDN URL (`/files/<name>/model.gguf`).
  func fileLocation(_ name: String) throws -> String {
    try server.fileURL(name: name, filename: "model.gguf").absoluteString
  }

  /// The origin-form request target of `url`: its encoded path and query.
  static func target(_ url: URL) -> String {
    let string = url.absoluteString
    guard let scheme = string.range(of: "://"),
      let slash = string[scheme.upperBound...].firstIndex(of: "/")
    else { return "/" }
    return String(string[slash...])
  }

  /// What a child process printed and how it ended.
  struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  /// Runs `executable` with `arguments` to its end.
  static func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> Run {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = environment
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    // stderr is read on another thread so that neither pipe fills while the other is read.
    let errors = ErrorsReader(stderr.fileHandleForReading)
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Run(
      status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self), stderr: errors.wait())
  }
}

/// Reads a pipe to its end on a thread of its own.
/// `@unchecked Sendable`: `done` orders the one write of `text` before its read.
private final class ErrorsReader: @unchecked Sendable {
  private var text = ""
  private let done = DispatchSemaphore(value: 0)

  init(_ handle: FileHandle) {
    Thread.detachNewThread { [self] in
      text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
      done.signal()
    }
  }

  func wait() -> String {
    done.wait()
    return text
  }
}

/// What a hub test needs and does not have.
struct HubTestUnavailable: Error {
  var message: String
  init(_ message: String) { self.message = message }
}
