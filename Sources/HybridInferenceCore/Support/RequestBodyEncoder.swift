import Foundation

/// Encodes a request body as JSON, keeping the property order of every
/// `GenerationSchema` in it.
///
/// Foundation's `JSONEncoder` writes an object's keys in hash order. That is
/// harmless for the request's own fields but wrong for a JSON Schema: the
/// order of `properties` is the order the model writes the fields in (Gemini
/// follows it, and so does the grammar an OpenAI-compatible server derives
/// from it). So a schema met while encoding writes a placeholder string that
/// no other text can contain (a fresh random nonce per body), and the
/// schema's ordered text replaces the placeholder in the encoded JSON.
package enum RequestBodyEncoder {
  package static func encode(_ body: some Encodable) throws(HybridInferenceError) -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.withoutEscapingSlashes]
    let splices = SchemaSplices()
    if let key = SchemaSplices.key { encoder.userInfo[key] = splices }
    let data: Data
    do {
      data = try encoder.encode(body)
    } catch let error as HybridInferenceError {
      throw error
    } catch {
      throw .invalidOptions("the request could not be encoded: \(error)")
    }
    let schemas = splices.all
    guard !schemas.isEmpty else { return data }
    var text = String(decoding: data, as: UTF8.self)
    for (placeholder, schema) in schemas {
      text = text.replacingOccurrences(of: "\"\(placeholder)\"", with: schema)
    }
    return Data(text.utf8)
  }
}

/// The schemas one `RequestBodyEncoder.encode` met, each under its
/// placeholder. A class behind a lock because `JSONEncoder.userInfo` takes
/// `Sendable` values and `encode(to:)` can only reach it by reference.
final class SchemaSplices: Sendable {
  static let key = CodingUserInfoKey(rawValue: "HybridInference.SchemaSplices")

  private let nonce = UInt64.random(in: 0...UInt64.max)
  private let schemas = Locked<[(placeholder: String, text: String)]>([])

  /// Records `schemaText` and returns the string to encode in its place.
  func placeholder(for schemaText: String) -> String {
    schemas.withLock { schemas in
      let placeholder = "\u{E000}schema-\(nonce)-\(schemas.count)\u{E001}"
      schemas.append((placeholder, schemaText))
      return placeholder
    }
  }

  var all: [(placeholder: String, text: String)] { schemas.withLock { $0 } }
}
