package kv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseBulkPut(t *testing.T) {
	const nowSec = 1_800_000_000
	t.Run("good items", func(t *testing.T) {
		data := `[
			{"key": "a", "value": "text"},
			{"key": "b", "value": "AAEC/w==", "base64": true, "metadata": {"x": [1, 2]}},
			{"key": "c", "value": "v", "expiration_ttl": 120, "expiration": 1},
			{"key": "d", "value": "v", "expiration": 1800000600, "metadata": null, "extra": 1, "more": 2}
		]`
		pairs, warnings, err := ParseBulkPut("f.json", []byte(data), nowSec)
		if err != nil {
			t.Fatal(err)
		}
		if len(pairs) != 4 || string(pairs[0].Value) != "text" || !bytes.Equal(pairs[1].Value, []byte{0, 1, 2, 255}) {
			t.Fatalf("pairs %+v", pairs)
		}
		if string(pairs[1].Metadata) != `{"x":[1,2]}` || pairs[3].Metadata != nil {
			t.Errorf("metadata %s / %s", pairs[1].Metadata, pairs[3].Metadata)
		}
		if *pairs[2].ExpirationTTL != 120 || *pairs[3].Expiration != 1800000600 {
			t.Errorf("expirations %+v %+v", pairs[2], pairs[3])
		}
		want := `The item at index 3 contains unexpected properties: ["extra","more"].`
		if len(warnings) != 1 || warnings[0] != want {
			t.Errorf("warnings %q", warnings)
		}
	})
	t.Run("bad items are all named, up to 12", func(t *testing.T) {
		items := []string{`123`, `"a string"`, `{"key":"someKey"}`, `{"value":"someValue"}`, `{"key":"ok","value":"v"}`,
			`{"key":123,"value":"somevalue"}`, `{"key":"k","value":"v","expiration":"string"}`, `{"key":"k","value":"v","metadata":123}`,
			`{"key":"k","value":"v","base64":"yes"}`, `{"key":"","value":"v"}`, `{"key":"t","value":"v","expiration_ttl":30}`,
			`{"key":"b","value":"!!!","base64":true}`, `{"key":"p","value":"v","expiration":1000}`, `null`, `[]`}
		_, _, err := ParseBulkPut("keys.json", []byte("["+strings.Join(items, ",")+"]"), nowSec)
		var fe *BulkFileError
		if !errors.As(err, &fe) {
			t.Fatalf("got %v", err)
		}
		if len(fe.Items) != 14 {
			t.Errorf("%d items named, want 14: %q", len(fe.Items), fe.Items)
		}
		text := err.Error()
		for _, want := range []string{
			"Unexpected JSON input from \"keys.json\".\nEach item in the array should be an object that matches:\n\ninterface KeyValue {\n  key: string;",
			"\nThe item at index 0 is 123\nThe item at index 1 is \"a string\"\nThe item at index 2 is {\"key\":\"someKey\"}\nThe item at index 3 is {\"value\":\"someValue\"}\nThe item at index 5 is {\"key\":123,\"value\":\"somevalue\"}",
			`The item at index 9 (key "") is refused: Key names must not be empty`,
			`The item at index 10 (key "t") is refused: Invalid expiration_ttl of 30. Expiration TTL must be at least 60.`,
			`The item at index 11 (key "b") has a value that is not valid base64.`,
			`The item at index 12 (key "p") is refused: Invalid expiration of 1000.`,
			"the UNIX epoch.\n...",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("error lacks %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, "index 13") || strings.Contains(text, "index 4 ") {
			t.Errorf("error names too much:\n%s", text)
		}
	})
	t.Run("not an array", func(t *testing.T) {
		_, _, err := ParseBulkPut("keys.json", []byte(`{"key":"a","value":"b"}`), nowSec)
		want := "Unexpected JSON input from \"keys.json\".\nExpected an array of key-value objects but got type \"object\"."
		if fmt.Sprint(err) != want {
			t.Errorf("got %q", err)
		}
		_, _, err = ParseBulkPut("keys.json", []byte(`[{"key":`), nowSec)
		if err == nil || !strings.HasPrefix(err.Error(), "parse keys.json: ") {
			t.Errorf("got %v", err)
		}
	})
}

func TestParseBulkKeys(t *testing.T) {
	keys, err := ParseBulkKeys("k.json", []byte(`["a", {"name": "b", "expiration": 5}, "c"]`))
	if err != nil || strings.Join(keys, ",") != "a,b,c" {
		t.Fatalf("got %q, %v", keys, err)
	}
	_, err = ParseBulkKeys("keys.json", []byte(`["good", 12354, {"key": "someKey"}, null, ".."]`))
	want := "Unexpected JSON input from \"keys.json\".\nExpected an array of strings or objects with a \"name\" key.\n" +
		"The item at index 1 is type: \"number\" - 12354\n" +
		"The item at index 2 is type: \"object\" - {\"key\":\"someKey\"}\n" +
		"The item at index 3 is type: \"object\" - null\n" +
		"The item at index 4 (key \"..\") is refused: Illegal key name \"..\". Please use a different name."
	if fmt.Sprint(err) != want {
		t.Errorf("got  %q\nwant %q", err, want)
	}
	_, err = ParseBulkKeys("keys.json", []byte(`12354`))
	if want := "Unexpected JSON input from \"keys.json\".\nExpected an array of strings but got:\n12354"; fmt.Sprint(err) != want {
		t.Errorf("got %q", err)
	}
}

func TestWriteBulkGet(t *testing.T) {
	var b bytes.Buffer
	err := WriteBulkGet(&b, []Entry{
		{Key: "b", Found: true, Value: []byte("hi")},
		{Key: "10", Found: true, Value: []byte("ten")},
		{Key: "zz"},
		{Key: "2", Found: true, Value: []byte(`"q"`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"2\": {\n    \"value\": \"\\\"q\\\"\"\n  },\n  \"10\": {\n    \"value\": \"ten\"\n  },\n  \"b\": {\n    \"value\": \"hi\"\n  },\n  \"zz\": {\n    \"value\": null\n  }\n}\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	var v map[string]map[string]*string
	if err := json.Unmarshal(b.Bytes(), &v); err != nil || v["zz"]["value"] != nil {
		t.Errorf("not JSON: %v", err)
	}
}
