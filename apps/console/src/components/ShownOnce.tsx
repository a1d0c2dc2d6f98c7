import {
  Alert,
  Button,
  ClipboardCopy,
  Modal,
  ModalBody,
  ModalFooter,
  ModalHeader,
} from '@patternfly/react-core';

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
        <ClipboardCopy
          isReadOnly
          isCode={multiline}
          variant={multiline ? 'expansion' : 'inline-compact'}
          isExpanded={multiline}
          hoverTip="Copy"
          clickTip="Copied"
          textAriaLabel={what}
          toggleAriaLabel={`Show ${what}`}
          data-testid={`${id}-value`}
        >
          {value}
        </ClipboardCopy>
      </ModalBody>
      <ModalFooter>
        <Button variant="primary" onClick={onClose}>
          Done
        </Button>
      </ModalFooter>
    </Modal>
  );
}
