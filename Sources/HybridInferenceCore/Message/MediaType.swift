/// What the library checks of a MIME type (RFC 6838's `type/subtype`; no
/// parameters, which Gemini does not take).
package enum MediaType {
  /// `type/subtype`, each 1...127 of the characters RFC 6838 allows.
  package static func isWellFormed(_ mimeType: String) -> Bool {
    let halves = mimeType.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    guard halves.count == 2 else { return false }
    return halves.allSatisfy { half in
      (1...127).contains(half.count) && half.allSatisfy(isNameCharacter)
    }
  }

  /// Whether the type is `image/...` (case-insensitive, as MIME types are).
  package static func isImage(_ mimeType: String) -> Bool {
    mimeType.lowercased().hasPrefix("image/")
  }

  private static func isNameCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      true
    default:
      "!#$&^_.+-".utf8.contains(byte)
    }
  }
}
