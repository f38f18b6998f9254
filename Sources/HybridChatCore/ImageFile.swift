import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// `--image PATH`: a picture sent with the first prompt.
///
/// The media type comes from the file's extension (`.jpg`/`.jpeg`, `.png`,
/// `.webp`, `.gif`), checked when the command line is parsed, so a wrong
/// file is a usage error before any model loads; the bytes are read when the
/// chat starts.
public enum ImageFile {
  /// The media type for `path`'s extension.
  /// - Throws: A usage error for any other extension.
  public static func mimeType(for path: String) throws(CommandError) -> String {
    let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
    switch ext {
    case "jpg", "jpeg": return "image/jpeg"
    case "png": return "image/png"
    case "webp": return "image/webp"
    case "gif": return "image/gif"
    default:
      throw .usage("option '--image' takes a .jpg, .jpeg, .png, .webp or .gif file, got '\(path)'")
    }
  }

  /// The images at `paths`, in order, as attachments.
  /// - Parameter maximumBytes: The largest file read (a larger one could not
  ///   be sent inline anyway, and is not read into memory).
  /// - Throws: A usage error for a path that is not a readable regular
  ///   file, a file that is empty or larger than `maximumBytes`.
  public static func load(
    _ paths: [String], maximumBytes: Int = RequestOptions.defaultMaximumInlineMediaBytes
  ) throws(CommandError) -> [Attachment] {
    var attachments: [Attachment] = []
    for path in paths {
      let mimeType = try mimeType(for: path)
      // Only a regular file (a link is followed): a device or a pipe could be read without end.
      let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
      guard let attributes = try? FileManager.default.attributesOfItem(atPath: target),
        attributes[.type] as? FileAttributeType == .typeRegular,
        let size = (attributes[.size] as? NSNumber)?.intValue
      else { throw .usage("cannot read the image '\(path)' (not a readable file)") }
      guard size <= maximumBytes else {
        throw .usage("the image '\(path)' is \(size) bytes; at most \(maximumBytes) can be sent inline")
      }
      guard let data = FileManager.default.contents(atPath: target) else {
        throw .usage("cannot read the image '\(path)'")
      }
      guard !data.isEmpty else { throw .usage("the image '\(path)' is empty") }
      attachments.append(.image(data, mimeType: mimeType))
    }
    return attachments
  }
}
