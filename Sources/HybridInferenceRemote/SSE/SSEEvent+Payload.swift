import Foundation
import HybridInferenceCore

extension SSEEvent {
  /// What one event of a remote stream carries once the checks every
  /// backend makes are done.
  package enum Payload: Sendable, Hashable {
    /// Nothing to decode: no data, an empty data line, or data after the end.
    case nothing
    /// `data: [DONE]`, the OpenAI protocol's end marker (Gemini never sends it).
    case done
    /// A JSON document to decode as the backend's chunk.
    case json(Data)
  }

  /// The event's payload, or the error it carries.
  ///
  /// Every backend reads a stream the same way, so it is written once: a
  /// bare JSON error line counts even when the event also has `data:` lines
  /// (a server that writes its error without ending the event first); a
  /// data line that opens an `{"error": ...}` object is that error; JSON
  /// outside any event, that is not an error, is `.malformedResponse`.
  /// - Parameters:
  ///   - ignoringData: True once the stream has ended (`[DONE]`): later data
  ///     is dropped, though an error line is still read.
  ///   - streamError: The backend's error envelope in a JSON text, or nil
  ///     when the text is not one (its secrets redacted).
  package func payload(
    ignoringData: Bool = false, streamError: (Data) -> HybridInferenceError?
  ) throws(HybridInferenceError) -> Payload {
    if !otherLines.isEmpty, let error = streamError(Data(otherLines.joined(separator: "\n").utf8)) {
      throw error
    }
    guard hasData else {
      let start = trimmedOtherLines.first
      if start == "{" || start == "[" { throw .malformedResponse("the stream carried JSON outside an event") }
      return .nothing
    }
    let data = trimmedData
    if data.isEmpty || ignoringData { return .nothing }
    if data == "[DONE]" { return .done }
    let json = Data(data.utf8)
    if Self.opensErrorObject(data), let error = streamError(json) { throw error }
    return .json(json)
  }
}
