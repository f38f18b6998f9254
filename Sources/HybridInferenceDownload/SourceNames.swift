import Foundation
import HybridInferenceCore

/// The checks that keep a source's names from naming anything outside the
/// store: each becomes a directory or file name, or part of a URL path.
///
/// The repository follows the hub's own rule (huggingface_hub's
/// `validate_repo_id`): one or two names of letters, digits, `_`, `-` and
/// `.`, no `--` (the cache folder joins the two names with it) and no `..`.
/// A file is a relative path whose parts are neither empty, `.` nor `..`;
/// a revision the same (a branch may hold `/`: `refs/pr/1`). Control
/// characters and backslashes are refused everywhere: they mean something
/// to terminals and to other file systems.
enum SourceNames {
  /// The most bytes a name may take: a hub repository name is at most 96
  /// characters a part; a path part at most 255 bytes on Linux.
  static let maximumPartBytes = 255
  static let maximumPathBytes = 1024

  /// Throws unless `repository` is `organization/name` (or `name`) as the hub allows.
  static func checkRepository(_ repository: String) throws(HybridInferenceError) {
    let parts = repository.split(separator: "/", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count) else {
      throw .invalidModelSource("the repository \(quoted(repository)) is not organization/name")
    }
    for part in parts {
      let allowed = part.unicodeScalars.allSatisfy { scalar in
        scalar.isASCII
          && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_-.".unicodeScalars.contains(scalar))
      }
      guard allowed, (1...96).contains(part.utf8.count), part != ".", !part.contains(".."), !part.contains("--"),
        !part.hasPrefix("-"), !part.hasSuffix("-")
      else {
        throw .invalidModelSource(
          "the repository \(quoted(repository)) may hold only letters, digits, '_', '-' and '.', without '..' or '--'")
      }
    }
  }

  /// Throws unless `path` is a relative path of safe parts (a file in a
  /// repository, or a revision).
  static func checkPath(_ path: String, naming what: String) throws(HybridInferenceError) {
    guard !path.isEmpty, path.utf8.count <= maximumPathBytes else {
      throw .invalidModelSource("the \(what) is empty or longer than \(maximumPathBytes) bytes")
    }
    for part in path.split(separator: "/", omittingEmptySubsequences: false) {
      guard !part.isEmpty, part != ".", part != "..", part.utf8.count <= maximumPartBytes else {
        throw .invalidModelSource("the \(what) \(quoted(path)) has an empty, '.' or '..' part")
      }
      guard !part.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\\" }) else {
        throw .invalidModelSource("the \(what) \(quoted(path)) holds a control character or a backslash")
      }
    }
  }

  /// Throws unless `sha256` is 64 hexadecimal digits.
  static func checkSHA256(_ sha256: String) throws(HybridInferenceError) {
    guard sha256.utf8.count == 64, sha256.utf8.allSatisfy(HubCache.isHexDigit) else {
      throw .invalidModelSource("the SHA-256 \(quoted(sha256)) is not 64 hexadecimal digits")
    }
  }

  /// `text` quoted for an error message, bounded and inert.
  static func quoted(_ text: String) -> String {
    "'" + ServerText.inert(text, limit: 200) + "'"
  }
}
