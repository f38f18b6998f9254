import Foundation
import HybridInferenceDownload

/// What `--model` names: a GGUF file on this machine, or a file the command
/// downloads before it answers.
///
/// Three spellings, told apart by their start:
/// - `hf:ORG/REPO/FILE[@REVISION]`: a file of a Hugging Face repository.
///   FILE may hold `/`; REVISION (a branch, tag or commit; default `main`)
///   starts at the last `@`, so a FILE that holds `@` needs an explicit
///   `@main`.
/// - `https://HOST/PATH#sha256=<64 hex digits>`: any file, pinned by its
///   SHA-256. The pin rides in the fragment because a fragment is never
///   sent: the URL requested is the one before `#`.
/// - anything else: a path (`./hf:x` names a file whose name starts `hf:`).
///
/// Only the shape is checked here, so that a mistyped spelling is a usage
/// error naming what is expected. The library checks the rest before any
/// request, with its own errors: names that could leave the store (`..`,
/// control characters) and plain `http://` to another machine.
public enum ModelArgument: Sendable, Hashable {
  /// A GGUF file on this machine.
  case path(String)
  /// A file to download first; `fileName` is its last path component, for
  /// the progress bar.
  case source(ModelSource, fileName: String)

  /// What `--model` accepts, for usage errors.
  public static let expected = "a path, hf:ORG/REPO/FILE[@REVISION] or https://HOST/FILE#sha256=<64 hex digits>"

  /// Parses the value of `--model`.
  public init(parsing text: String) throws(CommandError) {
    if text.hasPrefix("hf:") {
      self = try Self.hub(String(text.dropFirst(3)), text: text)
    } else if let scheme = text.range(of: "://") {
      let name = text[..<scheme.lowerBound].lowercased()
      guard name == "https" || name == "http" else {
        throw .usage("option '--model' expects \(Self.expected); got '\(text)'")
      }
      self = try Self.pinnedURL(text)
    } else {
      self = .path(text)
    }
  }

  /// `ORG/REPO/FILE[@REVISION]`, the part after `hf:`.
  private static func hub(_ rest: String, text: String) throws(CommandError) -> ModelArgument {
    let expected = "option '--model' expects hf:ORG/REPO/FILE[@REVISION]; got '\(text)'"
    let parts = rest.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { throw .usage(expected) }
    var file = parts[2]
    var revision: Substring = "main"
    if let at = file.lastIndex(of: "@") {
      revision = file[file.index(after: at)...]
      file = file[..<at]
    }
    guard !file.isEmpty, !revision.isEmpty else { throw .usage(expected) }
    let source = ModelSource.huggingFace(
      repository: "\(parts[0])/\(parts[1])", file: String(file), revision: String(revision))
    return .source(source, fileName: String(file.split(separator: "/").last ?? file))
  }

  /// `http(s)://...#sha256=<hex>`: the URL before `#`, pinned by the fragment.
  private static func pinnedURL(_ text: String) throws(CommandError) -> ModelArgument {
    let pinSpelling = "https://HOST/FILE#sha256=<64 hex digits>"
    guard let hash = text.firstIndex(of: "#") else {
      throw .usage("option '--model' needs the file's SHA-256 after the URL, as \(pinSpelling); got '\(text)'")
    }
    let fragment = text[text.index(after: hash)...]
    guard fragment.hasPrefix("sha256=") else {
      throw .usage("option '--model' needs '#sha256=<64 hex digits>' after the URL; got '#\(fragment)'")
    }
    let digest = fragment.dropFirst("sha256=".count)
    guard digest.utf8.count == 64, digest.utf8.allSatisfy(\.isHexDigit) else {
      throw .usage("option '--model' needs 64 hexadecimal digits after '#sha256='; got '\(digest)'")
    }
    let address = String(text[..<hash])
    guard let url = URL(string: address), url.host?.isEmpty == false else {
      throw .usage("option '--model' expects a URL such as \(pinSpelling); got '\(address)'")
    }
    return .source(.url(url, sha256: String(digest)), fileName: url.lastPathComponent)
  }
}

extension UInt8 {
  /// Whether the byte is an ASCII hexadecimal digit, either case.
  fileprivate var isHexDigit: Bool {
    (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
  }
}
