import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The repository's loopback Hugging Face hub and CDN (Tests/HubServer/hub_server.py)
/// as a child process, for the model downloader's tests.
///
/// Two origins on 127.0.0.1: the hub answers `/{org}/{name}/resolve/{revision}/{path}`
/// with a 302 to the CDN, as huggingface.co does for an LFS file; the CDN
/// serves the bytes, and plain `/files/{name}/{filename}` URLs. Words in the
/// repository's name pick faults (`private`, `drop40`, `changing`, ...: the
/// script's header lists them), so a test that names its repository uniquely
/// has state of its own.
///
/// Sendable: its properties are constants, and `LoopbackScriptProcess` is.
public final class HubServerProcess: Sendable {
  /// `http://127.0.0.1:<P1>`: the hub, the `endpoint` a client is given.
  public let hubURL: URL
  /// `http://127.0.0.1:<P2>`: the CDN the hub redirects to.
  public let cdnURL: URL
  private let process: LoopbackScriptProcess

  /// Starts the server, serving the bytes of `file` for every repository and
  /// expecting `Authorization: Bearer <token>` for private ones; returns once
  /// both origins listen.
  public init(file: URL, token: String) throws {
    process = try LoopbackScriptProcess(
      script: "Tests/HubServer/hub_server.py", arguments: ["--file", file.path, "--token", token], portCount: 2)
    guard let hubURL = URL(string: "http://127.0.0.1:\(process.ports[0])"),
      let cdnURL = URL(string: "http://127.0.0.1:\(process.ports[1])")
    else {
      process.stop()
      throw LoopbackScriptProcess.StartError(description: "hub_server.py printed ports that make no URL")
    }
    self.hubURL = hubURL
    self.cdnURL = cdnURL
  }

  /// The hub's URL of `path` in `repository` (`org/name`) at `revision`,
  /// which is sent as one percent-encoded segment (`refs%2Fpr%2F1`).
  public func resolveURL(repository: String, revision: String = "main", path: String) throws -> URL {
    let segment = revision.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? revision
    return try Self.url(hubURL, "/\(Self.encoded(repository))/resolve/\(segment)/\(Self.encoded(path))")
  }

  /// The CDN's plain URL of `filename` under `name` (no hub in between); its
  /// statistics are those of repository `files/<name>`.
  public func fileURL(name: String, filename: String) throws -> URL {
    try Self.url(cdnURL, "/files/\(Self.encoded(name))/\(Self.encoded(filename))")
  }

  /// What the hub and the CDN saw for `repository` (`org/name`, or
  /// `files/<name>` for plain URLs). The server first waits (up to 1 s) for
  /// the CDN answers still being written, so bytes a client has read are counted.
  public func stats(repository: String) throws -> HubStats {
    let data = try Self.get(try Self.url(hubURL, "/_stats/\(Self.encoded(repository))"))
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    return try decoder.decode(HubStats.self, from: data)
  }

  /// Stops the server and waits for it to exit.
  public func stop() { process.stop() }

  /// RFC 3986's unreserved characters: what a path segment may hold unencoded.
  private static let unreserved = CharacterSet(
    charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

  /// `path` with each of its `/`-separated segments percent-encoded.
  private static func encoded(_ path: String) -> String {
    path.split(separator: "/", omittingEmptySubsequences: false)
      .map { $0.addingPercentEncoding(withAllowedCharacters: unreserved) ?? String($0) }
      .joined(separator: "/")
  }

  /// `origin` followed by the already encoded `path`.
  private static func url(_ origin: URL, _ path: String) throws -> URL {
    guard let url = URL(string: origin.absoluteString + path) else {
      throw StatsError(description: "no URL from \(origin.absoluteString + path)")
    }
    return url
  }

  /// A blocking GET on loopback: the statistics are read between a test's
  /// steps, where nothing else runs.
  private static func get(_ url: URL) throws -> Data {
    let result = ResultBox()
    let semaphore = DispatchSemaphore(value: 0)
    let task = URLSession.shared.dataTask(with: url) { data, response, error in
      let status = (response as? HTTPURLResponse)?.statusCode ?? 0
      if let data, status == 200 {
        result.set(.success(data))
      } else {
        result.set(
          .failure(StatsError(description: "GET \(url) failed: status \(status), \(String(describing: error))")))
      }
      semaphore.signal()
    }
    task.resume()
    if semaphore.wait(timeout: .now() + 10) == .timedOut {
      task.cancel()
      throw StatsError(description: "GET \(url) timed out")
    }
    return try result.get()
  }

  /// Why the statistics could not be read, or a URL could not be made.
  public struct StatsError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
  }
}

/// The result of a URLSession completion handed to the waiting thread.
/// `@unchecked Sendable`: `lock` guards `value`, written once by URLSession's
/// delegate queue and read by the caller after the semaphore.
private final class ResultBox: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Result<Data, Error> = .failure(HubServerProcess.StatsError(description: "no answer"))

  func set(_ result: Result<Data, Error>) {
    lock.withLock { value = result }
  }

  func get() throws -> Data {
    try lock.withLock { value }.get()
  }
}
