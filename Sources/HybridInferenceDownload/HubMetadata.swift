import Foundation
import HybridInferenceCore
import HybridInferenceRemote

/// What the hub says of a file before its bytes are fetched: the commit the
/// revision names, the blob's name (its SHA-256 for an LFS file), its size,
/// and where the bytes are. Read from a `HEAD` of `/{repo}/resolve/{revision}/{file}`
/// that follows redirects within the hub's origin (a renamed repository)
/// but not the one to the CDN, whose headers carry it all, as
/// huggingface_hub's `get_hf_file_metadata` does.
struct HubMetadata: Equatable {
  let commit: String
  /// The blob's name: the LFS object id (`X-Linked-Etag`), else the `ETag`.
  let etag: String
  let size: Int64?
  /// Where the bytes are: the CDN the hub redirects to, or the resolve URL.
  let location: URL

  /// The resolve URL of `file` at `revision`, each part percent-encoded (the
  /// revision whole, `/` included, as huggingface_hub quotes it).
  static func resolveURL(endpoint: URL, repository: String, file: String, revision: String) -> URL? {
    let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/;"))
    let encode: (String) -> String? = { $0.addingPercentEncoding(withAllowedCharacters: allowed) }
    let parts = file.split(separator: "/").map { encode(String($0)) }
    guard let revision = encode(revision), parts.allSatisfy({ $0 != nil }) else { return nil }
    let path = repository + "/resolve/" + revision + "/" + parts.compactMap { $0 }.joined(separator: "/")
    return URL(string: endpoint.absoluteString + "/" + path)
  }

  /// Asks the hub.
  static func fetch(_ url: URL, connection: DownloadConnection) async throws -> HubMetadata {
    let origin = Origin(url)
    let response = try await connection.send("HEAD", to: url) { _, next in Origin(next) == origin }
    response.cancel()
    let head = response.head
    let shown = ModelSource.display(response.url)
    guard (200...399).contains(head.statusCode) else {
      throw HybridInferenceError.downloadFailed(
        url: shown, status: head.statusCode, reason: BlobTransfer.reason(for: head.statusCode))
    }
    var location = response.url
    if (300...399).contains(head.statusCode) {
      guard let text = head.value("Location"), let next = URL(string: text, relativeTo: response.url)?.absoluteURL
      else {
        throw HybridInferenceError.downloadFailed(
          url: shown, status: head.statusCode, reason: "the hub's redirect has no usable Location")
      }
      try DownloadConnection.checkHop(next, from: response.url)
      location = next
    }
    guard let commit = head.value("X-Repo-Commit"), HubCache.isCommit(commit) else {
      throw HybridInferenceError.downloadFailed(
        url: shown, status: head.statusCode, reason: "the hub named no commit (X-Repo-Commit) for the file")
    }
    guard let etag = (head.value("X-Linked-Etag") ?? head.value("ETag")).map(normalized), isBlobName(etag) else {
      throw HybridInferenceError.downloadFailed(
        url: shown, status: head.statusCode, reason: "the hub named no usable ETag for the file")
    }
    // A redirect's own Content-Length is its body's, not the file's.
    let sizeText = head.value("X-Linked-Size") ?? (head.statusCode == 200 ? head.value("Content-Length") : nil)
    let size = sizeText.flatMap { ContentRange.number(Substring($0.trimmingCharacters(in: .whitespaces))) }
    return HubMetadata(commit: commit, etag: etag, size: size, location: location)
  }

  /// An ETag without `W/` and quotes, lowercased.
  static func normalized(_ etag: String) -> String {
    var text = Substring(etag.trimmingCharacters(in: .whitespaces))
    if text.hasPrefix("W/") { text = text.dropFirst(2) }
    if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = text.dropFirst().dropLast() }
    return text.lowercased()
  }

  /// Whether `name` may name a blob: a git object id (40 hexadecimal
  /// digits) or a SHA-256 (64); anything else could name another path.
  static func isBlobName(_ name: String) -> Bool {
    (name.utf8.count == 40 || name.utf8.count == 64) && name.utf8.allSatisfy(HubCache.isHexDigit)
  }
}
