import HybridInference
import XCTest

/// `UnavailableReason` is a struct that can grow: its static members match
/// as enum cases did, equality is the code's, and a reason the library does
/// not know (a later release's, a backend's own) reaches the catch-all case.
final class AvailabilityTests: XCTestCase {
  /// What an app's switch (the contract's) makes of an availability.
  private func verdict(_ availability: Availability) -> String {
    switch availability {
    case .available: "available"
    case .unavailable(.deviceNotEligible): "not eligible"
    case .unavailable(.localInferenceNotEnabled): "switched off"
    case .unavailable(.modelNotReady): "not ready"
    case .unavailable(let reason): "other: \(reason.code)"
    }
  }

  func testStaticMembers_matchAsCases_andOthersReachTheCatchAll() {
    XCTAssertEqual(verdict(.available), "available")
    XCTAssertEqual(verdict(.unavailable(.deviceNotEligible)), "not eligible")
    XCTAssertEqual(verdict(.unavailable(.localInferenceNotEnabled)), "switched off")
    XCTAssertEqual(verdict(.unavailable(.modelNotReady)), "not ready")
    XCTAssertEqual(verdict(.unavailable(.missingAPIKey)), "other: missingAPIKey")
    let later = UnavailableReason(code: "thermalState", description: "the device is too hot")
    XCTAssertEqual(verdict(.unavailable(later)), "other: thermalState")
  }

  func testEquality_isTheCodes_andTheWordsAreKept() {
    let reworded = UnavailableReason(code: "modelNotReady", description: "other words")
    XCTAssertEqual(reworded, .modelNotReady)
    XCTAssertEqual(Set([reworded, .modelNotReady]).count, 1, "hashed as compared")
    XCTAssertEqual(verdict(.unavailable(reworded)), "not ready")
    XCTAssertNotEqual(UnavailableReason.missingAPIKey, .missingCredential)
    XCTAssertEqual(UnavailableReason.modelNotReady.code, "modelNotReady")
    XCTAssertEqual("\(UnavailableReason.modelNotReady)", "the on-device model file is missing or not ready")
    XCTAssertEqual(
      Availability.unavailable(.localInferenceNotEnabled).description,
      "unavailable (on-device inference is switched off)")
    let codes: [UnavailableReason] = [
      .deviceNotEligible, .localInferenceNotEnabled, .modelNotReady, .missingAPIKey, .invalidBaseURL,
      .missingCredential, .missingProject,
    ]
    XCTAssertEqual(Set(codes).count, codes.count, "every reason has its own code")
  }
}
