import {
  Alert,
  Button,
  ClipboardCopy,
  ClipboardCopyButton,
  CodeBlock,
  CodeBlockAction,
  CodeBlockCode,
  Modal,
  ModalBody,
  ModalFooter,
  ModalHeader,
} from '@patternfly/react-core';
import { useState } from 'react';

/**
 * A secret the API returns once (a token, a bootstrap manifest with the sidecar's credentials):
 * shown with a copy button, and gone when the dialog closes. It is never kept in page state
 * beyond this dialog nor written to storage.
 */
export function ShownOnce({
  id,
  title,
  what,
  value,
  multiline = false,
  onClose,
}: {
  id: string;
  title: string;
  what: string;
  value: string;
  multiline?: boolean;
  onClose: () => void;
}) {
  const [copied, setCopied] = useState(false);
  return (
    <Modal isOpen variant="large" onClose={onClose} aria-labelledby={`${id}-title`}>
      <ModalHeader title={title} labelId={`${id}-title`} />
      <ModalBody>
        <Alert
          variant="warning"
          isInline
          className="fleet-gap-bottom"
          title={`Copy ${what} now: it is shown only once and cannot be read back.`}
        />
        {multiline ? (
          <CodeBlock
            actions={
              <CodeBlockAction>
                <ClipboardCopyButton
                  id={`${id}-copy`}
                  textId={`${id}-text`}
                  aria-label={`Copy ${what}`}
                  variant="plain"
                  onClick={() => {
                    // A refused clipboard (no permission, no secure context) leaves the text
                    // on screen to select by hand.
                    void navigator.clipboard.writeText(value).then(() => setCopied(true));
                  }}
                  onTooltipHidden={() => setCopied(false)}
                >
                  {copied ? 'Copied' : `Copy ${what}`}
                </ClipboardCopyButton>
              </CodeBlockAction>
            }
          >
            <CodeBlockCode id={`${id}-text`} data-testid={`${id}-value`} className="fleet-manifest">
              {value}
            </CodeBlockCode>
          </CodeBlock>
        ) : (
          <ClipboardCopy
            isReadOnly
            hoverTip="Copy"
            clickTip="Copied"
            textAriaLabel={what}
            data-testid={`${id}-value`}
          >
            {value}
          </ClipboardCopy>
        )}
      </ModalBody>
      <ModalFooter>
        <Button variant="primary" onClick={onClose}>
          Done
        </Button>
      </ModalFooter>
    </Modal>
  );
}
