import Foundation
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The environment variables huggingface_hub reads, read the same way, so
/// that both agree on where the cache is, which hub to ask and which token
/// to send.
struct HubEnvironment: Sendable {
  /// The token file is read only up to this size: a token is ~40 bytes.
  static let maximumTokenFileBytes = 4096

  let variables: [String: String]

  init(_ variables: [String: String]) {
    self.variables = variables
  }

  private func value(_ name: String) -> String? {
    guard let value = variables[name], !value.isEmpty else { return nil }
    return value
  }

  private var home: URL {
    URL(fileURLWithPath: value("HOME") ?? NSHomeDirectory())
  }

  /// `HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`.
  var hubHome: URL {
    if let path = value("HF_HOME") { return URL(fileURLWithPath: path) }
    let cache = value("XDG_CACHE_HOME").map { URL(fileURLWithPath: $0) } ?? home.appendingPathComponent(".cache")
    return cache.appendingPathComponent("huggingface")
  }

  /// `HF_HUB_CACHE`, else `HF_HOME/hub`.
  var hubCache: URL {
    value("HF_HUB_CACHE").map { URL(fileURLWithPath: $0) } ?? hubHome.appendingPathComponent("hub")
  }

  /// `HF_ENDPOINT`, else https://huggingface.co; a trailing `/` dropped.
  var endpoint: URL {
    let text = value("HF_ENDPOINT").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? "https://huggingface.co"
    return URL(string: text) ?? URL(fileURLWithPath: "/")
  }

  /// `HF_TOKEN`, else the first line of the token file (`HF_TOKEN_PATH`,
  /// else `HF_HOME/token`); nil when neither holds one.
  func token() -> String? {
    if let token = value("HF_TOKEN") { return token.trimmingCharacters(in: .whitespacesAndNewlines) }
    let path = value("HF_TOKEN_PATH") ?? hubHome.appendingPathComponent("token").path
    // Not through a link, not blocking on a pipe, bounded: a token file is small.
    guard let (descriptor, size) = try? PrivateFile.openOwn(path, maximumBytes: Self.maximumTokenFileBytes) else {
      return nil
    }
    defer { close(descriptor) }
    guard let bytes = PrivateFile.read(descriptor, at: 0, count: size),
      let line = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first
    else { return nil }
    let token = line.trimmingCharacters(in: .whitespaces)
    return token.isEmpty ? nil : token
  }

  /// `HYBRID_INFERENCE_MODELS`, else `$XDG_CACHE_HOME` or `~/.cache`, then
  /// `hybrid-inference/models`.
  var modelsDirectory: URL {
    if let path = value("HYBRID_INFERENCE_MODELS") { return URL(fileURLWithPath: path) }
    let cache = value("XDG_CACHE_HOME").map { URL(fileURLWithPath: $0) } ?? home.appendingPathComponent(".cache")
    return cache.appendingPathComponent("hybrid-inference/models")
  }
}
