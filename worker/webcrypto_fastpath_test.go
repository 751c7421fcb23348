package worker_test

import (
	"encoding/json"
	"testing"

	"github.com/celldgo/celld/worker"
)

// signForms signs and verifies with the forms the fast path takes (exact
// names, Uint8Array and ArrayBuffer) and with those it leaves to the
// checked path (other spellings, other views, a string saltLength, wrong
// usages): each answers what the checked path answers.
const signForms = `
const S = crypto.subtle;
const data = new TextEncoder().encode("the message");
const view = new DataView(data.buffer);
const outcome = (p) => p.then((v) => (typeof v === "boolean" ? v : v.byteLength), (e) => e.name + ": " + e.message);
module.exports.default = {
  async fetch() {
    const ec = await S.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"]);
    const pss = await S.generateKey({ name: "RSA-PSS", hash: "SHA-256", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]) }, false, ["sign", "verify"]);
    const ed = await S.generateKey("Ed25519", false, ["sign", "verify"]);
    const ecSig = await S.sign({ name: "ECDSA", hash: "SHA-256" }, ec.privateKey, data);
    const pssSig = await S.sign({ name: "RSA-PSS", saltLength: 32 }, pss.privateKey, data);
    const edSig = await S.sign("Ed25519", ed.privateKey, data);
    const out = {};
    const cases = {
      ec_exact: () => S.verify({ name: "ECDSA", hash: "SHA-256" }, ec.publicKey, ecSig, data),
      ec_buffer: () => S.verify({ name: "ECDSA", hash: { name: "SHA-256" } }, ec.publicKey, ecSig, data.buffer),
      ec_lower_hash: () => S.verify({ name: "ECDSA", hash: "sha-256" }, ec.publicKey, ecSig, data),
      ec_lower_name: () => S.verify({ name: "ecdsa", hash: "SHA-256" }, ec.publicKey, ecSig, data),
      ec_dataview: () => S.verify({ name: "ECDSA", hash: "SHA-256" }, ec.publicKey, new Int8Array(ecSig), view),
      ec_other_hash: () => S.verify({ name: "ECDSA", hash: "SHA-384" }, ec.publicKey, ecSig, data),
      ec_sign_dataview: () => S.sign({ name: "ECDSA", hash: "SHA-512" }, ec.privateKey, view),
      ec_no_hash: () => S.sign("ECDSA", ec.privateKey, data),
      ec_bad_hash: () => S.sign({ name: "ECDSA", hash: "SHA-3" }, ec.privateKey, data),
      ec_wrong_usage: () => S.verify({ name: "ECDSA", hash: "SHA-256" }, ec.privateKey, ecSig, data),
      ec_wrong_alg: () => S.sign({ name: "RSA-PSS", saltLength: 32 }, ec.privateKey, data),
      ec_no_data: () => S.sign({ name: "ECDSA", hash: "SHA-256" }, ec.privateKey, "text"),
      pss_exact: () => S.verify({ name: "RSA-PSS", saltLength: 32 }, pss.publicKey, pssSig, data),
      pss_string_salt: () => S.verify({ name: "RSA-PSS", saltLength: "32" }, pss.publicKey, pssSig, data),
      pss_other_salt: () => S.verify({ name: "RSA-PSS", saltLength: 20 }, pss.publicKey, pssSig, data),
      pss_no_salt: () => S.verify("RSA-PSS", pss.publicKey, pssSig, data),
      ed_string: () => S.verify("Ed25519", ed.publicKey, edSig, data),
      ed_object: () => S.verify({ name: "Ed25519" }, ed.publicKey, edSig, data),
      ed_flipped: () => S.verify("Ed25519", ed.publicKey, new Uint8Array(edSig).map((b, i) => (i === 3 ? b ^ 1 : b)), data),
      ed_sign_lower: () => S.sign("ed25519", ed.privateKey, data),
      not_a_key: () => S.sign("Ed25519", {}, data),
    };
    for (const [name, f] of Object.entries(cases)) out[name] = await outcome(f());
    return Response.json(out);
  },
};
`

func TestWebCryptoSignFastPathForms(t *testing.T) {
	rt := newRuntime(t, signForms, worker.Config{Isolates: 1})
	resp := fetch(t, rt, "GET", "/", nil)
	if resp.Status != 200 {
		t.Fatalf("status %d: %s", resp.Status, resp.Body)
	}
	var got map[string]any
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatalf("%v: %s", err, resp.Body)
	}
	want := map[string]any{
		"ec_exact": true, "ec_buffer": true, "ec_lower_hash": true, "ec_lower_name": true, "ec_dataview": true,
		"ec_other_hash": false, "ec_sign_dataview": 64.0,
		"ec_no_hash":     `TypeError: Missing "hash" in AlgorithmIdentifier. (ECDSA requires that the hash algorithm be specified at call time rather than on the key. This differs from other WebCrypto algorithms for historical reasons.)`,
		"ec_bad_hash":    "NotSupportedError: Unrecognized or unimplemented digest algorithm requested.",
		"ec_wrong_usage": `InvalidAccessError: Requested key usage "verify" does not match any usage listed in this CryptoKey.`,
		"ec_wrong_alg":   `InvalidAccessError: Requested algorithm "RSA-PSS" does not match this CryptoKey's algorithm "ECDSA".`,
		"ec_no_data":     "TypeError: Failed to execute 'sign' on 'SubtleCrypto': parameter 3 is not of type 'Array'.",
		"pss_exact":      true, "pss_string_salt": true, "pss_other_salt": false,
		"pss_no_salt": "DataError: RSA-PSS requires that you provide a saltLength.",
		"ed_string":   true, "ed_object": true, "ed_flipped": false, "ed_sign_lower": 64.0,
		"not_a_key": "TypeError: Failed to execute 'sign' on 'SubtleCrypto': parameter 2 is not of type 'CryptoKey'.",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: got %v, want %v", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d outcomes, want %d", len(got), len(want))
	}
}
