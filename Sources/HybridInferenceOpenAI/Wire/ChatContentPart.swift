import Foundation
import HybridInferenceCore

/// One element of a user message's `content` array: text, an image as a
/// data URL (`image_url`), or WAV/MP3 audio (`input_audio`), as the OpenAI
/// chat-completions protocol defines them.
///
/// Only a turn with media is sent as an array; a text turn stays a string,
/// which every server takes.
enum ChatContentPart: Sendable, Hashable, Encodable {
  /// `{"type": "text", "text": ...}`
  case text(String)
  /// `{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}`
  case imageURL(String)
  /// `{"type": "input_audio", "input_audio": {"data": base64, "format": "wav"}}`
  case inputAudio(data: String, format: String)

  /// The parts of a user turn, in the turn's order (thoughts left out).
  /// - Throws: `.unsupportedRequest` for a file URI (only Gemini can open
  ///   one) and for inline media other than images and WAV or MP3 audio,
  ///   which the protocol has no part for.
  static func parts(of content: Content) throws(HybridInferenceError) -> [ChatContentPart] {
    var parts: [ChatContentPart] = []
    for part in content.parts where part.thought != true {
      if let text = part.text, !text.isEmpty { parts.append(.text(text)) }
      if let file = part.fileData {
        throw .unsupportedRequest(
          "an OpenAI-compatible server cannot open a file URI (\(file.mimeType ?? "no MIME type")); "
            + "send the bytes with Attachment.image or .data")
      }
      if let blob = part.inlineData { parts.append(try media(blob)) }
    }
    return parts
  }

  /// The part for inline bytes: images as data URLs, WAV and MP3 audio as
  /// `input_audio` (the two formats the protocol names).
  private static func media(_ blob: Part.Blob) throws(HybridInferenceError) -> ChatContentPart {
    let type = blob.mimeType.lowercased()
    if MediaType.isImage(type), MediaType.isWellFormed(type) {
      return .imageURL("data:\(type);base64,\(blob.data.base64EncodedString())")
    }
    if let format = audioFormats[type] {
      return .inputAudio(data: blob.data.base64EncodedString(), format: format)
    }
    throw .unsupportedRequest(
      "an OpenAI-compatible server is sent images and WAV or MP3 audio only, not \(blob.mimeType)")
  }

  /// The audio MIME types `input_audio` takes, with the protocol's format name.
  private static let audioFormats: [String: String] = [
    "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/vnd.wave": "wav",
    "audio/mpeg": "mp3", "audio/mp3": "mp3",
  ]

  private enum CodingKeys: String, CodingKey {
    case type, text
    case imageURL = "image_url"
    case inputAudio = "input_audio"
  }

  private struct ImageURL: Encodable { var url: String }
  private struct InputAudio: Encodable {
    var data: String
    var format: String
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    switch self {
    case .text(let text):
      try container.encode("text", forKey: .type)
      try container.encode(text, forKey: .text)
    case .imageURL(let url):
      try container.encode("image_url", forKey: .type)
      try container.encode(ImageURL(url: url), forKey: .imageURL)
    case .inputAudio(let data, let format):
      try container.encode("input_audio", forKey: .type)
      try container.encode(InputAudio(data: data, format: format), forKey: .inputAudio)
    }
  }
}
