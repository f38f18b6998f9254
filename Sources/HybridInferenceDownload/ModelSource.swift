import Foundation
import HybridInferenceCore

/// Where an on-device model file comes from when it is not on disk yet: a
/// file of a Hugging Face repository, or any https URL with its SHA-256.
///
/// A struct with static members rather than an enum, so that a release can
/// add sources (another hub, a file the app ships) without breaking an app's
/// `switch`.
///
/// ```swift
/// let hub = ModelSource.huggingFace(repository: "HuggingFaceTB/SmolLM2-360M-Instruct-GGUF",
///                                   file: "smollm2-360m-instruct-q8_0.gguf")
/// let pinned = ModelSource.url(URL(string: "https://models.example.com/m.gguf")!,
///                              sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
/// ```
///
/// Names are checked when a download or a lookup starts, before any request:
/// a repository, file or revision that could name a path outside the store
/// (`..`, an empty part, a backslash, a control character) throws
/// `HybridInferenceError.invalidModelSource`.
public struct ModelSource: Sendable, Hashable, CustomStringConvertible {
  enum Kind: Sendable, Hashable {
    case huggingFace(repository: String, file: String, revision: String)
    case url(URL)
  }

  let kind: Kind
  /// The SHA-256 the file must have, lowercase hexadecimal; nil for a hub
  /// file whose hub-announced SHA-256 (`X-Linked-Etag`) is checked instead.
  public let sha256: String?

  /// A file of a Hugging Face model repository, fetched from the hub
  /// (`HF_ENDPOINT`, else https://huggingface.co) into the hub's cache
  /// layout, where `huggingface_hub` and llama.cpp find it too.
  /// - Parameters:
  ///   - repository: `organization/name`.
  ///   - file: The file's path in the repository.
  ///   - revision: A branch, a tag or a commit hash.
  ///   - sha256: The SHA-256 to check; nil checks the one the hub announces
  ///     for the file (its LFS object id).
  public static func huggingFace(
    repository: String, file: String, revision: String = "main", sha256: String? = nil
  ) -> ModelSource {
    ModelSource(
      kind: .huggingFace(repository: repository, file: file, revision: revision), sha256: sha256?.lowercased())
  }

  /// A file at `url` (https; plain http only to this machine), checked
  /// against `sha256` and kept in `ModelStore.directory`.
  public static func url(_ url: URL, sha256: String) -> ModelSource {
    ModelSource(kind: .url(url), sha256: sha256.lowercased())
  }

  /// The source in words, without any query of a URL (it may hold a signature).
  public var description: String {
    switch kind {
    case .huggingFace(let repository, let file, let revision):
      "hf:\(repository)/\(file)@\(revision)"
    case .url(let url):
      ModelSource.display(url)
    }
  }

  /// The name of the file the source gives, its last path component.
  var fileName: String {
    switch kind {
    case .huggingFace(_, let file, _): String(file.split(separator: "/").last ?? "")
    case .url(let url): url.lastPathComponent
    }
  }

  /// `url` reduced to scheme, host, port and path: no user, password,
  /// query or fragment, which may hold credentials.
  static func display(_ url: URL) -> String {
    var components = URLComponents()
    components.scheme = url.scheme
    components.host = url.host
    components.port = url.port
    components.path = url.path
    return components.string ?? "(a URL)"
  }
}
