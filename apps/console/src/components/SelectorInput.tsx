import { Button, TextInput } from '@patternfly/react-core';
import { useEffect, useState } from 'react';

/**
 * A label selector typed in full and applied on submit (Enter or the button), not per keystroke:
 * half-typed selectors ("env in (pr") are not requests worth refusing.
 */
export function SelectorInput({
  value,
  onApply,
  button = 'Filter',
  label = 'Label selector',
  invalid = false,
}: {
  value: string;
  onApply: (selector: string) => void;
  button?: string;
  label?: string;
  invalid?: boolean;
}) {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  return (
    <form
      className="fleet-inline"
      onSubmit={(event) => {
        event.preventDefault();
        onApply(draft.trim());
      }}
    >
      <TextInput
        aria-label={label}
        placeholder="Label selector, e.g. env=prod,tier in (gold)"
        value={draft}
        validated={invalid ? 'error' : 'default'}
        onChange={(_e, v) => setDraft(v)}
        className="fleet-selector"
      />
      <Button type="submit" variant="control">
        {button}
      </Button>
    </form>
  );
}
